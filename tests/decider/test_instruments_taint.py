"""The taint tracker on hand-written servlets in the shape of a labelled benchmark (one vulnerable and one
safe variant per trick) and on Python functions: which source reaches which sink, at which lines."""

from __future__ import annotations

import tomllib

import pytest

from ouroboros_gates.decider.instruments import untagged_symbols
from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.languages import parse_source

_SERVLET = """package bench;

public class Case extends HttpServlet {{
    @Override
    public void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {{
        String param = request.getParameter("q");
        String bar;
{body}
        String sql = "SELECT * FROM users WHERE name = '" + bar + "'";
        java.sql.Statement statement = DatabaseHelper.getSqlStatement();
        statement.executeQuery(sql);
    }}
}}
"""

_TRICKS = {
    "constant condition": (
        '        int num = 106;\n        if ((7 * 42) - num > 200) bar = "safe";\n'
        "        else bar = param;\n",
        '        int num = 86;\n        if ((7 * 42) - num > 200) bar = "safe";\n        else bar = param;\n',
    ),
    "negative division": (
        '        int num = -7;\n        if (num / 2 == -3) bar = param;\n        else bar = "safe";\n',
        '        int num = -7;\n        if (num % 2 == 1) bar = param;\n        else bar = "safe";\n',
    ),
    "ternary": (
        '        int num = 50;\n        bar = (7 * 18) + num > 200 ? "safe" : param;\n',
        '        int num = 196;\n        bar = (7 * 18) + num > 200 ? "safe" : param;\n',
    ),
    "map key": (
        "        java.util.HashMap<String, Object> map = new java.util.HashMap<String, Object>();\n"
        '        map.put("keyA", "a_Value");\n        map.put("keyB", param);\n'
        '        bar = (String) map.get("keyB");\n',
        "        java.util.HashMap<String, Object> map = new java.util.HashMap<String, Object>();\n"
        '        map.put("keyA", "a_Value");\n        map.put("keyB", param);\n'
        '        bar = (String) map.get("keyA");\n',
    ),
    "list index": (
        "        java.util.List<String> values = new java.util.ArrayList<String>();\n"
        '        values.add("safe");\n        values.add(param);\n        values.add("moresafe");\n'
        "        values.remove(0);\n        bar = values.get(0);\n",
        "        java.util.List<String> values = new java.util.ArrayList<String>();\n"
        '        values.add("safe");\n        values.add(param);\n        values.add("moresafe");\n'
        "        values.remove(0);\n        bar = values.get(1);\n",
    ),
    "switch": (
        '        char target = "ABC".charAt(2);\n        switch (target) {\n'
        "            case 'A': bar = \"bob\"; break;\n            case 'C': bar = param; break;\n"
        '            default: bar = "uncle"; break;\n        }\n',
        '        char target = "ABC".charAt(1);\n        switch (target) {\n'
        "            case 'A': bar = param; break;\n            case 'B': bar = \"bob\"; break;\n"
        "            default: bar = param; break;\n        }\n",
    ),
    "string building and a helper": (
        "        StringBuilder sb = new StringBuilder();\n        sb.append(param);\n"
        "        bar = doSomething(sb.toString());\n",
        "        StringBuilder sb = new StringBuilder();\n        sb.append(param);\n"
        '        bar = doSomething("constant");\n',
    ),
}
_HELPER = """
    private static String doSomething(String value) {
        String out = value.trim();
        return out;
    }
"""


def _flows(source: str, language: str = "java") -> list[Flow]:
    path = "Case.java" if language == "java" else "app.py"
    parsed = parse_source(path, language, source.encode())
    assert not parsed.has_errors
    return [f for f in parsed.flows if not f.sanitized]


def _sql_flows(body: str) -> list[Flow]:
    source = _SERVLET.format(body=body)
    source = source[: source.rstrip().rfind("}")] + _HELPER + "}\n"
    return [f for f in _flows(source) if f.operation == "sql"]


@pytest.mark.parametrize("trick", sorted(_TRICKS))
def test_each_trick_separates_the_vulnerable_from_the_safe_variant(trick: str) -> None:
    vulnerable, safe = _TRICKS[trick]
    found = _sql_flows(vulnerable)
    assert found, f"{trick}: the vulnerable variant has no flow"
    flow = found[0]
    assert (
        flow.function.endswith("doPost") and flow.source_line == 6 and flow.call == "statement.executeQuery"
    )
    assert flow.source_kind in ("request", "parameter") and flow.sink_line > flow.source_line
    assert _sql_flows(safe) == [], f"{trick}: the safe variant still has a flow"


def test_a_sanitiser_clears_only_its_own_operation() -> None:
    source = """class C {
    void doPost(HttpServletRequest request, HttpServletResponse response) throws Exception {
        String param = request.getHeader("h");
        String safe = org.owasp.esapi.ESAPI.encoder().encodeForHTML(param);
        response.getWriter().println(safe);
        new java.io.File(safe);
    }
}
"""
    parsed = parse_source("C.java", "java", source.encode())
    by_operation = {f.operation: f for f in parsed.flows}
    assert by_operation["html_output"].sanitized and not by_operation["file_path"].sanitized
    assert "through a sanitiser" in by_operation["html_output"].describe()


def test_python_sources_sinks_and_a_wrapper() -> None:
    source = """import os
import subprocess


def run(command):
    return subprocess.check_output(command, shell=True)


def handler(request):
    name = os.environ.get("NAME")
    cmd = f"ls {name}"
    run(cmd)
    safe = int(name)
    os.system("echo %d" % safe)
"""
    flows = _flows(source, "python")
    wrapper = [f for f in flows if f.function == "run"]
    assert wrapper and wrapper[0].source_kind == "parameter" and wrapper[0].operation == "command"
    called = [f for f in flows if f.function == "handler"]
    assert len(called) == 1 and called[0].via_call and called[0].source_kind == "environment"
    assert (called[0].source_line, called[0].sink_line) == (10, 12)


def test_untagged_taint_entries_name_no_framework_symbol() -> None:
    for language in ("java", "javascript", "php", "python"):
        raw = tomllib.loads((RULESET / "taint" / f"{language}.toml").read_text())
        for kind in ("source", "sink", "sanitizer"):
            for entry in raw.get(kind, []):
                text = " ".join(
                    [*entry.get("names", []), *entry.get("attributes", []), entry.get("receiver", "")]
                )
                tagged = "framework" in entry or "library" in entry
                assert untagged_symbols(text, tagged) == [], (language, entry["id"])


def test_an_argument_vector_and_a_shell_quote_are_not_command_flows() -> None:
    source = """import shlex
import subprocess


def delete(self, name):
    self._run_ssh('svctask rmvdisk -force %s' % name)


def delete_fixed(self, name):
    self._run_ssh(['svctask', 'rmvdisk', '-force', name])


def archive(path):
    subprocess.check_output("tar czf out.tgz " + shlex.quote(path), shell=True)
"""
    flows = {f.function: f for f in _flows(source, "python")}
    assert set(flows) == {"delete"} and flows["delete"].sink == "command.named"


def test_a_local_holding_an_argument_vector_is_one_until_it_is_bound_to_a_string() -> None:
    source = """import subprocess


def listed(self, name, force):
    cmd = ['svctask', 'rmvdisk', '-force', name]
    if not force:
        cmd.remove('-force')
    self._run_ssh(cmd)
    subprocess.call(cmd)


def rebound(self, name):
    cmd = ['svctask', 'rmvdisk', name]
    cmd = ' '.join(cmd)
    self._run_ssh(cmd)


def maybe(self, name, raw):
    cmd = ['svctask', 'rmvdisk', name]
    if raw:
        cmd = 'svctask rmvdisk %s' % name
    self._run_ssh(cmd)
"""
    flows = _flows(source, "python")
    assert not [f for f in flows if f.function == "listed"]
    assert [f.sink_line for f in flows if f.function == "rebound" and not f.sanitized] == [15]
    assert [f.sink_line for f in flows if f.function == "maybe" and not f.sanitized] == [22]


def test_a_method_that_shares_a_sink_function_name_is_no_sink() -> None:
    source = """import os
import re
from shutil import rmtree


def drop(self, key, pattern, path):
    self.index[key].remove(key)
    self.loop.remove(path)
    re.compile(pattern)
    self.Request(path)


def delete(key, pattern, path):
    os.remove(path)
    rmtree(key)
    compile(pattern, "<string>", "exec")
"""
    flows = _flows(source, "python")
    assert [f for f in flows if f.function == "drop"] == []
    found = sorted((f.sink, f.sink_line) for f in flows if f.function == "delete")
    assert found == [("code.eval", 16), ("path.os", 14), ("path.os", 15)]


def test_a_named_command_sink_needs_a_verb_of_running_and_an_ldap_search_a_directory() -> None:
    source = """def inspect(self, command, key):
    handle_remote_command_error(f"inspect {command}", key)
    _invoke_ipython_shell(command)
    HIDDEN_SETTINGS.search(key)


def run(self, command, key):
    self._run_ssh(command)
    self._cli_run(command)
    self.conn.search(key, "(uid=%s)" % command)
"""
    flows = _flows(source, "python")
    assert [f for f in flows if f.function == "inspect"] == []
    found = sorted((f.sink, f.sink_line) for f in flows if f.function == "run")
    assert found == [("command.named", 8), ("command.named", 9), ("ldap.search.connection", 10)]


def test_a_bare_call_of_the_files_own_function_or_of_a_parameter_is_not_the_librarys() -> None:
    source = """import os


def move(task, dest):
    os.rename(task, dest)


def migrate(task, dest, remove):
    move(task, dest)
    remove(task)


class Store:
    def open(self, name):
        return open(name)
"""
    found = {(f.function, f.sink, f.sink_line, f.via_call) for f in _flows(source, "python")}
    assert found == {
        ("move", "path.os", 5, False),
        ("migrate", "path.os", 9, True),  # what the file's move does with its arguments, not shutil.move
        ("Store.open", "path.open", 15, False),  # a method named open is not what a bare open() calls
    }


def test_a_writer_is_a_page_when_it_is_the_responses_not_when_a_library_is_handed_one() -> None:
    source = """class C {
    void doGet(HttpServletRequest request, HttpServletResponse response) throws Exception {
        String name = request.getParameter("n");
        java.io.PrintWriter writer = response.getWriter();
        writer.println(name);
    }

    static void copy(String data, java.io.Writer writer) throws Exception {
        writer.write(data);
    }
}
"""
    found = [(f.function, f.sink, f.sink_line) for f in _flows(source) if f.operation == "html_output"]
    assert found == [("C.doGet", "html.writer", 5)]


def test_javascript_and_typescript_handlers_parameters_reach_queries_commands_and_files() -> None:
    source = """const { exec, execFile } = require('child_process')
const fs = require('fs')
const path = require('path')

function search(req, res) {
  const term = req.query.q
  const { id } = req.params
  db.query(`SELECT * FROM t WHERE name LIKE '%${term}%'`)
  db.query('SELECT * FROM t WHERE id = ?', [id])
  fs.readFile(path.basename(req.query.file), () => {})
  items.forEach((item) => exec('rm ' + item))
}

async function run(name, opts = {}) {
  exec('ls ' + name)
  execFile('ls', [name])
  const out = await fs.promises.readFile(name)
  return out
}
"""
    typed = source.replace("run(name, opts = {})", "run(name: string, opts: object = {}): Promise<Buffer>")
    for language, path, text in (("javascript", "a.js", source), ("typescript", "a.ts", typed)):
        parsed = parse_source(path, language, text.encode())
        assert not parsed.has_errors
        found = {(f.function, f.operation, f.sink_line, f.sanitized, f.tags) for f in parsed.flows}
        assert found == {
            ("search", "sql", 8, False, ()),  # req is a parameter: no prior needed
            ("search", "sql", 9, True, ()),  # a constant query (the id a bound parameter): guarded
            ("search", "file_path", 10, True, ()),  # through path.basename
            ("search.<anonymous#2>", "command", 11, False, ()),  # the callback is a function of its own
            ("run", "command", 15, False, ()),
            ("run", "command", 16, True, ()),  # an argument vector: guarded
            ("run", "file_path", 17, False, ()),
        }, (language, found)


def test_a_bare_call_is_the_module_its_name_was_imported_from() -> None:
    source = """from subprocess import call
from re import compile
from .wrappers.request import Request


class Client:
    def fetch(self, url, pattern, cmd):
        Request(url)
        compile(pattern)
        call(cmd)
        self.open(url)
        super().open(url)
        open(url)
"""
    found = sorted((f.sink, f.sink_line) for f in _flows(source, "python"))
    # subprocess's call is a command (a bare call( was none before); the package's Request and the class's
    # own open are no sinks, re's compile is a pattern (a sink for external input only, not for a parameter);
    # the builtin open is one
    assert found == [("command.subprocess", 10), ("path.open", 13)]


_PHP = """<?php
function lookup($db, $name) {
    $id = $_GET['id'];
    $rows = mysqli_query($db, "SELECT * FROM t WHERE id = '$id'");
    $db->query("SELECT * FROM t WHERE name = " . $db->quote($name));
    system('ping -c 4 ' . escapeshellarg($_POST['host']));
    $out = `ls {$_GET['dir']}`;
    echo htmlspecialchars($_GET['q']), $_COOKIE['theme'];
    header('Location: ' . $_REQUEST['next']);
    $n = (int) $_GET['n'];
    mysqli_query($db, "SELECT * FROM t LIMIT $n");
    return unserialize(base64_decode($_POST['state']));
}

class Store {
    public function save(string $path, $data) {
        $this->stmt->exec();
        $pdo = new PDO($this->dsn);
        $pdo->exec("DELETE FROM t WHERE k = '$data'");
        file_put_contents(basename($path), $data);
        print $_SERVER['DOCUMENT_ROOT'] . $_SERVER['HTTP_REFERER'];
    }
}

if (isset($_GET['page'])) {
    include $_GET['page'] . '.php';
    foreach ($_POST as $key => $value) {
        $parts[] = $value;
    }
    array_push($cmds, $_GET['extra']);
    exec(implode(' ', $parts));
    passthru($cmds[0]);
}
"""


def test_php_superglobals_and_parameters_reach_its_sinks_in_functions_and_in_the_script_itself() -> None:
    parsed = parse_source("page.php", "php", _PHP.encode())
    assert not parsed.has_errors
    found = {
        (f.function, f.operation, f.sink_line, f.source_kind, f.source_line, f.sanitized)
        for f in parsed.flows
    }
    assert found == {
        ("lookup", "sql", 4, "request", 3, False),  # an interpolated string
        ("lookup", "sql", 5, "parameter", 2, True),  # through PDO's quote
        ("lookup", "command", 6, "request", 6, True),  # through escapeshellarg
        ("lookup", "command", 7, "request", 7, False),  # backticks are shell_exec
        ("lookup", "html_output", 8, "request", 8, True),  # echo's first value is escaped...
        ("lookup", "html_output", 8, "request", 8, False),  # ... its second is not
        ("lookup", "redirect", 9, "request", 9, False),
        ("lookup", "deserialize", 12, "request", 12, False),  # (int) made line 11's query safe
        ("Store.save", "sql", 19, "parameter", 16, False),  # a local bound to `new PDO(...)` is a connection
        ("Store.save", "file_path", 20, "parameter", 16, True),
        ("Store.save", "html_output", 21, "request", 21, False),  # the Referer header, not DOCUMENT_ROOT
        ("<global>", "file_inclusion", 26, "request", 26, False),  # the script's own code, outside functions
        ("<global>", "command", 31, "request", 27, False),  # $parts filled in the loop
        ("<global>", "command", 32, "request", 30, False),  # $cmds filled by array_push
    }, sorted(found)
    # `$this->stmt->exec()` is a statement's exec, not PHP's exec(); only the Referer line is a source
    assert not any(f.call.endswith("stmt.exec") for f in parsed.flows)
    assert [f.source_line for f in parsed.flows if f.sink_line == 21] == [21]


def test_the_languages_the_parser_hands_to_the_taint_step_are_the_ones_it_reads() -> None:
    from ouroboros_gates.decider import languages
    from ouroboros_gates.decider.instruments import _taint_model

    assert languages.TAINT_LANGUAGES == _taint_model.TAINT_LANGUAGES
    assert all(_taint_model.vocabulary_of(language) is not None for language in _taint_model.TAINT_LANGUAGES)


_ARMS_PY = """def view(request, items, c, k):
    if c:
        q = request.args["q"]
        q = int(q)
        cursor.execute("SELECT " + q)
    x = "a"
    if c:
        x = request.args["x"]
    elif k:
        x = "b"
    else:
        x = "c"
    cursor.execute("SELECT " + x)
    y = ""
    for i in items:
        cursor.execute("SELECT " + y)
        y = request.args["y"]
    z = request.args["z"]
    if c:
        z = int(z)
    cursor.execute("SELECT " + z)
"""
_ARMS_JS = """function h(req, kind) {
  let x = 'a';
  switch (kind) {
    case 1: x = req.query.x; break;
    case 2: x = 'b'; break;
  }
  db.query('SELECT ' + x);
}
"""
_ARMS_JAVA = """class A { void f(javax.servlet.http.HttpServletRequest request, int k) throws Exception {
  String y = "";
  if (k > 1) { y = request.getParameter("y"); y = org.owasp.esapi.ESAPI.encoder().encodeForSQL(null, y); }
  statement.executeQuery("SELECT " + y);
} }
"""


def test_inside_a_branch_a_reassignment_replaces_and_the_branch_not_taken_keeps_what_was_before() -> None:
    def flows(path: str, language: str, source: str) -> set[tuple[int, int, bool]]:
        return {
            (f.source_line, f.sink_line, f.sanitized)
            for f in parse_source(path, language, source.encode()).flows
        }

    # escaped inside the branch that read it: nothing reaches line 5; the elif/else arms do not wipe the if's
    # taint (13); a loop's next turn sees the last one's (16); a sanitiser in a branch that may not run leaves
    # the taint (21) guarded: the int() in the branch (5) and the loop's first turn, a constant (16)
    assert flows("a.py", "python", _ARMS_PY) == {
        (3, 5, True),
        (8, 13, False),
        (16, 16, True),
        (17, 16, False),
        (18, 21, False),
    }
    assert flows("a.js", "javascript", _ARMS_JS) == {(4, 7, False)}  # case 2 does not wipe case 1
    assert flows("A.java", "java", _ARMS_JAVA) == {(3, 4, True)}  # read and encoded in one branch


_GUARDED = {
    "python": (
        "a.py",
        """def view(request, root):
    name = request.args["name"]
    if name.isdigit():
        cursor.execute("SELECT " + name)
    if not re.match(r"^[a-z]+$", name):
        abort(400)
    os.system("ls " + name)
    page = request.args["page"]
    full = os.path.realpath(os.path.join(root, page))
    if not full.startswith(root):
        raise ValueError(page)
    open(full)
    os.system("cat " + full)
    other = request.args["o"]
    if re.match(r"[a-z]", other):
        os.system(other)
""",
    ),
    "java": (
        "A.java",
        """class A { void f(javax.servlet.http.HttpServletRequest request) throws Exception {
  String id = request.getParameter("id");
  if (!id.matches("[0-9]+")) { return; }
  statement.executeQuery("SELECT " + id);
  String q = request.getParameter("q");
  if (org.apache.commons.lang3.StringUtils.isNumeric(q)) statement.executeQuery("SELECT " + q);
  statement.executeQuery("SELECT " + q);
} }""",
    ),
    "javascript": (
        "a.js",
        """function h(req, res) {
  const sort = req.query.sort
  if (!['name', 'date'].includes(sort)) return res.status(400).end()
  db.query('SELECT * FROM t ORDER BY ' + sort)
  const n = req.query.n
  if (Number.isInteger(n) && n > 0) { db.query('SELECT * FROM t LIMIT ' + n) }
  if (Number.isInteger(n) || n > 0) { db.query('SELECT * FROM t LIMIT ' + n) }
}""",
    ),
    "php": (
        "a.php",
        """<?php
$id = $_GET['id'];
if (!ctype_digit($id)) { die('bad id'); }
mysqli_query($db, "SELECT * FROM t WHERE id = $id");
$u = $_GET['u'];
if (preg_match('/^[a-z0-9_]+$/i', $u) && in_array($_GET['k'], $allowed)) { mysqli_query($db, "SELECT '$u'"); }
if (preg_match('/[a-z]/', $u)) { mysqli_query($db, "SELECT '$u'"); }
""",
    ),
}
_GUARDED_FLOWS = {
    # inside `if name.isdigit()` (4) and after `if not re.match("^...$", name): abort()` (7): checked; a
    # resolved path checked with startswith is safe to open (12), not to run (13); an unanchored pattern
    # proves nothing (16)
    "python": {(2, 4, True), (2, 7, True), (8, 12, True), (8, 13, False), (14, 16, False)},
    # after `if (!id.matches(...)) return;` and inside `if (isNumeric(q))`; not after it (7)
    "java": {(2, 4, True), (5, 6, True), (5, 7, False)},
    # an allowlist and Number.isInteger prove it, but not one side of an `||` (7)
    "javascript": {(2, 4, True), (5, 6, True), (5, 7, False)},
    # `die()` leaves; both sides of an `&&` hold; an unanchored pattern proves nothing (7)
    "php": {(2, 4, True), (5, 6, True), (5, 7, False)},
}


@pytest.mark.parametrize("language", sorted(_GUARDED))
def test_a_validating_condition_clears_where_it_holds_and_after_a_branch_that_leaves(language: str) -> None:
    path, source = _GUARDED[language]
    found = {
        (f.source_line, f.sink_line, f.sanitized) for f in parse_source(path, language, source.encode()).flows
    }
    assert found == _GUARDED_FLOWS[language]


_ELEMENTS = {
    "python": (
        "v.py",
        """def view(request):
    parts = request.args["ip"].split(".")
    if parts[0].isdigit() and parts[1].isdigit():
        os.system("ping " + parts[0] + "." + parts[1])
    os.system("ping " + parts[0])
    if not parts[2].isdigit():
        abort(400)
    os.system("ping " + parts[2])
    parts = request.args["x"].split(".")
    os.system("ping " + parts[2])
""",
    ),
    "php": (
        "ping.php",
        """<?php
$octet = explode(".", $_REQUEST['ip']);
if (is_numeric($octet[0]) && is_numeric($octet[1]) && sizeof($octet) == 2) {
    $target = $octet[0] . '.' . $octet[1];
    shell_exec('ping -c 4 ' . $target);
}
shell_exec('ping ' . $octet[0]);
""",
    ),
    "javascript": (
        "h.js",
        """function h(req, res) {
  if (Number.isInteger(req.query.n)) { db.query('SELECT * FROM t LIMIT ' + req.query.n) }
  db.query('SELECT * FROM t LIMIT ' + req.query.n)
}
""",
    ),
}
_ELEMENT_FLOWS = {
    # each element checked where its test holds (4) and after a branch that leaves (8); not after the `if`
    # (5), nor once the list is bound again (10)
    "python": {(2, 5), (9, 10)},
    # DVWA's "impossible" ping: every octet numeric, the address rebuilt from them; one octet after the `if`
    # is not
    "php": {(2, 7)},
    # a field of the request checked in place: safe inside the `if` only (read first at 2)
    "javascript": {(2, 3)},
}


@pytest.mark.parametrize("language", sorted(_ELEMENTS))
def test_a_validated_element_is_safe_where_its_test_holds_and_follows_its_variable(language: str) -> None:
    path, source = _ELEMENTS[language]
    found = {
        (f.source_line, f.sink_line)
        for f in parse_source(path, language, source.encode()).flows
        if not f.sanitized
    }
    assert found == _ELEMENT_FLOWS[language]


_SCRIPT_PY = """import os
import subprocess
import sys

name = sys.argv[1]
os.system("ls " + name)


def helper(path):
    os.system("cat " + path)


class Tool:
    def run(self, cmd):
        subprocess.call(cmd, shell=True)


if __name__ == "__main__":
    subprocess.call(f"grep {sys.argv[2]} data.txt", shell=True)
    os.system("echo " + os.path.basename(__file__))
"""

_SCRIPT_JS = """const { exec } = require("child_process");
const target = process.argv[2];
exec("ping -c 1 " + target);
function run(cmd) { exec(cmd); }
const handler = (req) => exec(req.query.cmd);
exec("uptime");
"""


def test_a_scripts_top_level_code_is_walked_as_one_more_function_and_its_definitions_are_not() -> None:
    python = parse_source("tool.py", "python", _SCRIPT_PY.encode())
    found = {
        (f.function, f.operation, f.sink_line, f.source_kind, f.source_line)
        for f in python.flows
        if not f.sanitized
    }
    assert found == {
        ("<global>", "command", 6, "environment", 5),  # argv read at top level, run at top level
        ("helper", "command", 10, "parameter", 9),
        ("Tool.run", "command", 15, "parameter", 14),
        ("<global>", "command", 19, "environment", 19),  # inside `if __name__ == "__main__":`
    }, sorted(found)
    script = parse_source("ping.js", "javascript", _SCRIPT_JS.encode())
    top = {
        (f.operation, f.sink_line, f.source_kind, f.source_line)
        for f in script.flows
        if f.function == "<global>"
    }
    # the function and the arrow function are their own; `exec("uptime")` is a constant, guarded
    assert top == {("command", 3, "environment", 2), ("command", 6, "constant", 6)}
    # a module of definitions alone has no top-level flow
    library = parse_source("lib.py", "python", b"import os\n\n\ndef f(x):\n    os.system(x)\n")
    assert [f.function for f in library.flows] == ["f"]


_EVERYDAY_SINKS = """import logging
import re
from flask import Flask, request
from ldap.filter import escape_filter_chars

app = Flask(__name__)
log = logging.getLogger(__name__)


def helper(pattern, name):
    log.info("matching %s", name)
    return re.compile(pattern), root.findall(name)


@app.route("/search")
def search():
    q = request.args["q"]
    re.search(q, "text")
    re.search(re.escape(q), "text")
    re.search("^[a-z]+$", "text")
    log.warning("search for " + q)
    log.warning("search for " + q.replace("\\n", "").replace("\\r", ""))
    log.warning("search for " + q.replace("a", "b"))
    root.findall(f".//user[@name='{q}']")
    conn.search_s("dc=x", 2, "(uid=" + q + ")")
    conn.search_s("dc=x", 2, "(uid=" + escape_filter_chars(q) + ")")
    return "ok"
"""


def test_a_pattern_a_log_line_and_an_element_path_are_sinks_for_request_data_only() -> None:
    parsed = parse_source("app.py", "python", _EVERYDAY_SINKS.encode())
    found = sorted((f.function, f.operation, f.sink_line, f.sanitized) for f in parsed.flows)
    # a helper's parameters reaching a pattern, a log line or an element path raise nothing (everyday code),
    # nor does a constant pattern; request data does, unless re.escape, the removal of CR and LF (not any
    # replace) or LDAP's escaping is on its path
    assert found == [
        ("search", "ldap", 25, False),
        ("search", "ldap", 26, True),
        ("search", "log", 21, False),
        ("search", "log", 22, True),
        ("search", "log", 23, False),
        ("search", "regex", 18, False),
        ("search", "regex", 19, True),
        ("search", "xpath", 24, False),
    ]


_HOST_ALLOW_LIST = """import requests
from urllib.parse import urlparse
from flask import Flask, abort, redirect, request

app = Flask(__name__)
ALLOWED_HOSTS = {"api.example.com"}
ALLOWED_NEXT = {"/", "/cart"}


@app.route("/fetch")
def fetch():
    url = request.args["url"]
    names = [n for n in NAMES if requests.get(url)]
    if urlparse(url).hostname not in ALLOWED_HOSTS:
        abort(400)
    requests.get(url)
    open(url)
    return "ok"


@app.route("/next")
def after():
    target = request.args["next"]
    return redirect(target if target in ALLOWED_NEXT else "/"), redirect(target if target else "/")
"""


def test_an_allow_listed_host_clears_a_request_not_a_file_and_conditions_in_expressions_are_read() -> None:
    parsed = parse_source("app.py", "python", _HOST_ALLOW_LIST.encode())
    found = sorted((f.operation, f.sink_line, f.sanitized) for f in parsed.flows if f.function == "fetch")
    assert found == [
        ("file_path", 17, False),
        ("outbound_request", 13, False),
        ("outbound_request", 16, True),
    ]
    after = sorted(
        (f.operation, f.sanitized) for f in parsed.flows if f.function == "after" and f.sink == "redirect"
    )
    assert after == [("redirect", False), ("redirect", True)]  # an allow-list in a conditional expression


def test_an_upload_saved_under_the_name_the_client_sent_is_a_path_flow() -> None:
    source = """import os
from flask import Flask, request
from werkzeug.utils import secure_filename

app = Flask(__name__)


@app.route("/upload", methods=["POST"])
def upload():
    f = request.files["file"]
    f.save(os.path.join("/srv/uploads", f.filename))
    f.save(os.path.join("/srv/uploads", secure_filename(f.filename)))
    return "ok"
"""
    parsed = parse_source("app.py", "python", source.encode())
    found = sorted((f.sink, f.sink_line, f.sanitized) for f in parsed.flows if f.operation == "file_path")
    assert found == [("path.upload", 11, False), ("path.upload", 12, True)]


def _lookup_route(path: str) -> str:
    return (
        "import subprocess\nfrom fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        f"@app.get({path})\n"
        "def lookup(domain: str):\n"
        '    subprocess.check_output("nslookup " + domain, shell=True)\n'
    )


@pytest.mark.parametrize("prefix", ["", "r", "u", "R"])
def test_a_route_path_written_with_a_text_prefix_is_still_a_route(prefix: str) -> None:
    flows = _flows(_lookup_route(prefix + '"/lookup/{domain}"'), "python")
    assert [(f.operation, f.source_kind) for f in flows] == [("command", "request")]


@pytest.mark.parametrize("path", ['b"/lookup/{domain}"', 'f"/lookup/{domain}"'])
def test_bytes_or_an_interpolated_string_is_not_a_route_path(path: str) -> None:
    flows = _flows(_lookup_route(path), "python")
    assert [(f.operation, f.source_kind) for f in flows] == [("command", "parameter")]
