"""LocalForge on the shipped examples: tickets, pull requests, trailers, commits and files at a revision."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ouroboros_gates.forge import Commit, Forge, ForgeError, LocalForge, NotFoundError, parse_trailers
from ouroboros_gates.schemas.errors import PermanentError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PUSHES = [json.loads(line) for line in (EXAMPLES / "pushes.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def forge(tmp_path_factory: pytest.TempPathFactory) -> LocalForge:
    """The examples' forge; its bundle is cloned once for the module."""
    return LocalForge.from_examples(EXAMPLES, tmp_path_factory.mktemp("forge-cache"))


def test_public_surface_is_pinned() -> None:
    from ouroboros_gates import forge

    assert forge.__all__ == [
        "Check",
        "Comment",
        "Commit",
        "Forge",
        "ForgeError",
        "LocalForge",
        "NotFoundError",
        "PullRequest",
        "Ticket",
        "WritableForge",
        "open_forge",
        "parse_trailers",
    ]


def test_local_forge_satisfies_the_protocol(forge: LocalForge) -> None:
    assert isinstance(forge, Forge)


def test_tickets_are_read_in_order_with_their_comments(forge: LocalForge) -> None:
    numbers = [ticket.number for ticket in forge.tickets()]
    assert numbers == [38, 41, 44, 45, 46, 47, 48, 50, 53]
    ticket = forge.ticket(53)
    assert ticket.labels == ("mining", "security")
    assert ticket.created_at == datetime(2026, 10, 1, 17, 48, 59, tzinfo=UTC)
    latest = ticket.comments[-1]
    assert latest.author == "ouroboros-loop"
    assert latest.id == 3386655091
    assert "```ouroboros-proposal" in latest.body
    assert 'instances = ["374fdc4", "31eb1b3"]' in latest.body


def test_every_mining_ticket_ends_with_a_proposal(forge: LocalForge) -> None:
    mining = [t for t in forge.tickets() if "mining" in t.labels]
    assert mining
    assert all("ouroboros-proposal" in t.comments[-1].body for t in mining)


def test_missing_ticket_and_pull_request_are_not_found(forge: LocalForge) -> None:
    with pytest.raises(NotFoundError):
        forge.ticket(999)
    with pytest.raises(NotFoundError):
        forge.pull_request(999)
    assert issubclass(NotFoundError, ForgeError)
    assert issubclass(ForgeError, PermanentError)


def test_pull_request_58_carries_the_merger_session_trailer(forge: LocalForge) -> None:
    pull = forge.pull_request(58)
    assert (pull.state, pull.draft, pull.base, pull.author) == ("open", False, "main", "csf-fixer")
    assert pull.head_sha == pull.commits[-1].sha
    assert pull.commits[-1].trailers == {"CSF-Session": ("ouroboros-merger/4242",)}
    assert pull.commits[0].trailer("csf-model") == ("claude-opus-4-5-20251101",)
    assert [check.exit_code for check in pull.checks] == [0, 0, 0]


def test_pull_requests_filter_by_state(forge: LocalForge) -> None:
    assert [p.number for p in forge.pull_requests()] == [52, 55, 56, 58, 59, 60]
    assert [p.number for p in forge.pull_requests("merged")] == [52]
    assert forge.pull_request(55).draft
    assert forge.pull_request(56).checks[1].exit_code == 1


def test_trailers_follow_git() -> None:
    message = "Subject\n\nBody text.\n\nCSF-Session: a\ncsf-session : b\nCSF-Model: m\n  continued\n"
    assert parse_trailers(message) == {"CSF-Session": ("a", "b"), "CSF-Model": ("m continued",)}
    assert Commit.parse("0" * 40, message).trailer("CSF-SESSION") == ("a", "b")
    # The subject is never a trailer block, nor a last paragraph with prose in it.
    assert parse_trailers("CSF-Session: x") == {}
    assert parse_trailers("Subject\n\nCSF-Session: x\nnot a trailer") == {}


def test_exists_for_issues_pull_requests_and_commits(forge: LocalForge) -> None:
    assert forge.exists("#52")  # a pull request
    assert forge.exists("#47")  # a ticket
    assert not forge.exists("#999")
    assert forge.exists("374fdc4")
    assert not forge.exists("0000000")
    assert not forge.exists("main")


def test_has_commit_for_push_shas_and_prefixes(forge: LocalForge) -> None:
    for push in PUSHES:
        assert forge.has_commit(push["head"])
        assert forge.has_commit(push["base"])
    assert forge.has_commit(PUSHES[-1]["head"][:7])
    assert not forge.has_commit("f" * 40)
    assert not forge.has_commit("not-a-sha")


def test_file_at_a_push_head(forge: LocalForge) -> None:
    vulnerable = forge.file_at(PUSHES[1]["head"], "shop/reports.py")
    assert b"shell=True" in vulnerable
    assert b"shell=True" not in forge.file_at("31eb1b3", "shop/reports.py")
    with pytest.raises(NotFoundError):
        forge.file_at(PUSHES[1]["head"], "no/such/file.py")
    with pytest.raises(NotFoundError):
        forge.file_at("f" * 40, "shop/reports.py")


def test_a_commit_with_its_message_and_the_paths_it_changed(forge: LocalForge) -> None:
    commit = forge.commit("bd0245e")
    assert commit.sha == "bd0245e589eae64527bf26804f0d2094844147fe"
    assert commit.files == ("shop/db.py", "tests/test_db.py")
    assert commit.message.startswith("Bind the search term as a query parameter\n\n")
    assert forge.commit("374fdc4").files == (
        "shop/__init__.py",
        "shop/app.py",
        "shop/files.py",
        "shop/static/cart.js",
    )
    root = forge.commit("31eb1b3")  # the first commit: every path it holds
    assert "shop/app.py" in root.files and root.message.startswith("Initial shop")
    with pytest.raises(NotFoundError):
        forge.commit("f" * 40)
    with pytest.raises(ForgeError, match="refused"):
        forge.commit("--upload-pack=x")


@pytest.mark.parametrize(
    ("revision", "path"),
    [("--upload-pack=x", "shop/app.py"), ("-p", "shop/app.py"), ("374fdc4", "--output=/tmp/x"), ("", "a")],
)
def test_option_like_revisions_and_paths_are_refused(forge: LocalForge, revision: str, path: str) -> None:
    with pytest.raises(ForgeError, match="refused"):
        forge.file_at(revision, path)


def test_option_like_sha_is_refused(forge: LocalForge) -> None:
    with pytest.raises(ForgeError, match="refused"):
        forge.has_commit("--upload-pack=x")


def test_the_bundle_is_cloned_once(tmp_path: Path) -> None:
    first = LocalForge.from_examples(EXAMPLES, tmp_path)
    assert first.has_commit("31eb1b3")
    clones = sorted(tmp_path.iterdir())
    second = LocalForge.from_examples(EXAMPLES, tmp_path)
    assert second.has_commit("31eb1b3")
    assert sorted(tmp_path.iterdir()) == clones
    assert len(clones) == 1


def test_a_bundle_without_a_cache_directory_is_an_error(tmp_path: Path) -> None:
    forge = LocalForge(EXAMPLES / "forge", EXAMPLES / "repo.bundle")
    with pytest.raises(ForgeError, match="cache directory"):
        forge.has_commit("31eb1b3")


def _copy_forge(tmp_path: Path) -> Path:
    target = tmp_path / "forge"
    shutil.copytree(EXAMPLES / "forge", target)
    return target


def test_malformed_json_is_reported_with_file_and_line(tmp_path: Path) -> None:
    forge_dir = _copy_forge(tmp_path)
    broken = forge_dir / "tickets" / "45.json"
    broken.write_text('{\n  "number": 45,\n  "title": "x",\n  oops\n}\n')
    forge = LocalForge(forge_dir, tmp_path / "no-repo")
    with pytest.raises(ForgeError, match=r"45\.json:4:3: malformed JSON") as caught:
        forge.ticket(45)
    assert str(broken) in str(caught.value)
    with pytest.raises(ForgeError, match=r"45\.json:4:3"):
        forge.tickets()
    assert forge.ticket(44).number == 44


def test_a_missing_field_names_the_file_and_the_field(tmp_path: Path) -> None:
    forge_dir = _copy_forge(tmp_path)
    path = forge_dir / "pulls" / "60.json"
    data = json.loads(path.read_text())
    del data["head_sha"]
    data["draft"] = "no"
    path.write_text(json.dumps(data))
    with pytest.raises(ForgeError, match=r"60\.json: (missing field 'head_sha'|field 'draft')"):
        LocalForge(forge_dir, tmp_path / "no-repo").pull_request(60)


def test_a_number_that_does_not_match_the_file_name_is_an_error(tmp_path: Path) -> None:
    forge_dir = _copy_forge(tmp_path)
    shutil.copy(forge_dir / "tickets" / "38.json", forge_dir / "tickets" / "39.json")
    with pytest.raises(ForgeError, match=r"39\.json: number 38"):
        LocalForge(forge_dir, tmp_path / "no-repo").ticket(39)


def test_a_missing_repository_is_an_error(tmp_path: Path) -> None:
    forge = LocalForge(EXAMPLES / "forge", tmp_path / "no-repo")
    with pytest.raises(ForgeError, match="not a git repository"):
        forge.file_at("31eb1b3", "shop/app.py")
