"""Small pair corpora and labelled units written for the learning tests."""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.decider.learn.labels import LabelledUnit

SOURCES = """
[[source]]
id = "fixture-pairs"
kind = "pairs"
path = "pairs"
status = "development"
record = "README.md"
recorded = "2026-11-30"
licence = "Apache-2.0"

[[source]]
id = "fixture-adjudications"
kind = "adjudications"
path = "adjudications"
status = "recorded"
record = "README.md"
recorded = "2026-11-30"
licence = "Apache-2.0"

[[source]]
id = "population-v3-php"
kind = "pairs"
path = "population-v3-php-reserved"
status = "reserved"
record = "none"
recorded = "2026-11-30"
licence = "unknown"
"""

VULNERABLE = """def find_user(db, name):
    query = "SELECT * FROM users WHERE name = '%s'" % name
    return db.execute(query).fetchall()
"""
FIXED = """def find_user(db, name):
    query = "SELECT * FROM users WHERE name = ?"
    return db.execute(query, (name,)).fetchall()
"""


def write_pair(
    root: Path,
    name: str,
    *,
    repository: str = "acme/shop",
    family: str = "sql_injection",
    tier: str = "seeded",
    unscorable: bool = False,
    advisories: tuple[str, ...] = (),
    frameworks: tuple[str, ...] = (),
    kind: str = "pair",
    vulnerable: str = VULNERABLE,
    fixed: str = FIXED,
) -> Path:
    """One pair folder with its catalog and code files."""
    folder = root / name
    folder.mkdir(parents=True)
    sides = ("vulnerable", "fixed") if kind == "pair" else ("tip", "base")
    (folder / f"{sides[0]}.py").write_text(vulnerable)
    (folder / f"{sides[1]}.py").write_text(fixed)
    lines = [
        f"[{kind}]",
        f'repository = "{repository}"',
        f"advisories = {list(advisories)!r}".replace("'", '"'),
        'language = "python"',
        f'family = "{family}"',
        'function = "find_user"',
        "line = 2",
        f'tier = "{tier}"',
        'provenance = "human"',
        'licence = "Apache-2.0"',
        f"unscorable = {'true' if unscorable else 'false'}",
        f"frameworks = {list(frameworks)!r}".replace("'", '"'),
        f'{sides[0]} = "{sides[0]}.py"',
        f'{sides[1]} = "{sides[1]}.py"',
    ]
    (folder / "catalog.toml").write_text("\n".join(lines) + "\n")
    return folder


def corpus(tmp: Path) -> Path:
    """An allow-list beside a small pair corpus; returns the allow-list path."""
    (tmp / "sources.toml").write_text(SOURCES)
    pairs = tmp / "pairs"
    write_pair(pairs, "a-sql", repository="https://github.com/Acme/Shop.git", advisories=("CVE-2024-0001",))
    write_pair(pairs, "b-mirror", repository="mirror/shop-fork", advisories=("cve-2024-0001",))
    write_pair(pairs, "c-twin", repository="other/app", unscorable=True)
    write_pair(pairs, "d-title", repository="other/app", tier="title")
    write_pair(pairs, "e-benign", repository="other/app", kind="benign")
    return tmp / "sources.toml"


def unit(
    group: str,
    family: str,
    y: int,
    *,
    direction: str | None = None,
    source: str = "s",
    n: int = 0,
    frameworks: tuple[str, ...] = (),
    language: str = "python",
) -> LabelledUnit:
    """A labelled unit with placeholder code."""
    direction = direction or ("introducing" if y else "repair")
    return LabelledUnit(
        uid=f"{group}-{family}-{y}-{direction}-{n}",
        source=source,
        source_ref=f"{group}:{n}",
        repo=group,
        group=group,
        language=language,
        family=family,
        function="f",
        line=1,
        unit="pin" if direction in ("vulnerable", "fixed") else "delta",
        direction=direction,  # type: ignore[arg-type]
        y=1 if y else 0,
        code=f"def f():\n    return {n}\n",
        base_code=None,
        tier="seeded",
        provenance="human",
        licence="MIT",
        frameworks=frameworks,
    )


ROOT = Path(__file__).resolve().parents[3]
SMALL = [
    "sql_injection/python-delete-note",
    "sql_injection/python-orders-lookup",
    "sql_injection/python-user-search",
    "sql_injection/python-inventory-count",
    "sql_injection/python-grade-query",
    "sql_injection/php-room-list",
    "command_injection/python-ping-host",
    "command_injection/python-convert-image",
    "command_injection/python-git-clone",
    "command_injection/python-dns-lookup",
    "command_injection/python-alert-command",
    "path_traversal/python-download-file",
    "path_traversal/python-template-read",
    "path_traversal/python-export-csv",
    "deserialization/python-session-restore",
    "deserialization/python-config-load",
    "benign/python-ping-timeout",
    "benign/python-orders-add-column",
]


def small_corpus(tmp: Path) -> Path:
    """A copy of some shipped seeded pairs and an allow-list naming it; returns the allow-list."""
    import shutil

    for name in SMALL:
        shutil.copytree(ROOT / "ruleset" / "pairs" / name, tmp / "pairs" / name)
    (tmp / "sources.toml").write_text(SOURCES)
    return tmp / "sources.toml"
