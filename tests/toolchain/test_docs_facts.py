"""Facts the documents state about the code, checked against the code so that they cannot drift (decision
0114): the operator guide's settings table against the settings the code reads, every path of the
repository a document or a requirements comment names, the developer guide's test folders, the strict
mypy section decision 0083 quotes, and decision records that send a reader to a guide by a link
(test_readme.py checks that every link resolves). Counts and timings that no test can keep are not
written down.
"""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT
from tests.toolchain.test_infra import settings_read_by_code

OPERATOR_GUIDE = ROOT / "docs" / "operator-guide.md"
DEVELOPER_GUIDE = ROOT / "docs" / "developer-guide.md"
DECISIONS = sorted((ROOT / "docs" / "decisions").glob("0*.md"))
# Where the repository's paths are named: the documents, the requirements files' comments and the
# tool configurations.
NAMING_FILES = [
    ROOT / "README.md",
    ROOT / "examples" / "README.md",
    ROOT / "client" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "requirements.txt",
    ROOT / "requirements-dev.txt",
    ROOT / "tests" / "requirements-worker.txt",
    ROOT / "Makefile",
    ROOT / "mypy.ini",
    ROOT / "pytest.ini",
    ROOT / "ruff.toml",
]
# The local host's own settings (devhost/, not deployed) have rows too.
LOCAL_HOST_SOURCES = sorted((ROOT / "devhost").rglob("*.py"))


APP_SOURCES = [ROOT / "function_app.py"] + [
    path
    for package in ("core", "reference", "ingest", "reconcile", "export", "backends", "triggers")
    for path in sorted((ROOT / package).rglob("*.py"))
]


def settings_read() -> set[str]:
    """test_infra.py's scan, and names passed to any reader the settings modules define (core/*settings.py: a
    function whose first parameter is `name`, as `_int` and `_bool`, or whose `name` follows the `environ` it
    reads, as the webhooks' `_number`), so that a new reader's settings are found too."""
    readers: dict[str, int] = {}  # reader -> the position of its `name` parameter
    for module in sorted((ROOT / "core").glob("*settings.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                names = [arg.arg for arg in node.args.args]
                positions = [
                    index
                    for index, arg in enumerate(names)
                    if arg == "name" and (index == 0 or names[index - 1] == "environ")
                ]
                if positions:
                    readers[node.name] = positions[0]
    found = {name for name in settings_read_by_code() if not name.endswith(" (trigger connection)")}
    for path in APP_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in readers:
                position = readers[node.func.id]
                if len(node.args) > position:
                    argument = node.args[position]
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        found.add(argument.value)
    return found


def _settings_table() -> list[str]:
    """The rows of the operator guide's table under "## Settings"."""
    text = OPERATOR_GUIDE.read_text(encoding="utf-8")
    section = text[text.index("\n## Settings\n") :]
    section = section[: section.index("\n## ", 1)]
    return [line for line in section.splitlines() if line.startswith("| `")]


def test_every_setting_the_code_reads_has_a_row_and_every_row_is_read():
    rows = _settings_table()
    named = {name for row in rows for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row)}
    read = settings_read()
    assert sorted(read - named) == [], "add a row to the operator guide's Settings table"
    first_cells = {name for row in rows for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row.split("|")[1])}
    local_host = "\n".join(path.read_text(encoding="utf-8") for path in LOCAL_HOST_SOURCES)
    unread = {name for name in first_cells - read if f'"{name}"' not in local_host}
    assert unread == set(), "a row for a setting nothing reads: remove it"


# A path of the repository: folders and a file name with its extension, or a folder ending in "/".
PATH = re.compile(
    r"(?<![\w./-])((?:[A-Za-z_.][\w-]*/)+(?:[\w.-]+\.(?:py|json|md|bicep|txt|ini|toml|sh|yaml|js|png|example))?)(?![\w/])"
)


def test_every_path_of_the_repository_a_document_names_exists():
    top_level = {path.name for path in ROOT.iterdir()}
    missing = []
    for named_in in NAMING_FILES:
        for match in PATH.finditer(named_in.read_text(encoding="utf-8")):
            path = match.group(1)
            if path.split("/")[0] not in top_level:  # a URL's path, a folder in Azure, a glob
                continue
            if not (ROOT / path).exists():
                missing.append(f"{named_in.relative_to(ROOT)}: {path}")
    assert missing == []


def test_the_developer_guide_lists_every_folder_of_tests():
    text = DEVELOPER_GUIDE.read_text(encoding="utf-8")
    section = text[text.index("\n## Tests\n") :]
    listed = set(re.findall(r"^\| `(tests/\w+/)` \|", section, re.M))
    folders = {f"tests/{path.parent.name}/" for path in (ROOT / "tests").glob("*/test_*.py")}
    assert listed == folders


def test_decision_0083_quotes_the_strict_section_of_mypy_ini():
    record = next(path for path in DECISIONS if path.name.startswith("0083-")).read_text(encoding="utf-8")
    (quoted,) = re.findall(r"`(\[mypy-[^\]]+\])`", record)
    assert quoted in (ROOT / "mypy.ini").read_text(encoding="utf-8").splitlines()


def test_decision_records_send_readers_to_a_guide_by_a_link():
    """The README sends each reader to a guide: a record that says "the README's ..." or "(README)" for a
    section points at text that moved; a link to the guide's heading is checked by test_readme.py."""
    stale = [
        f"{path.name}: {match.group(0)}"
        for path in DECISIONS
        for match in re.finditer(
            r"README's|\(README[,)]|README\)|the README (has|says)", path.read_text(encoding="utf-8")
        )
    ]
    assert stale == []
