"""The README and the guides as a newcomer follows them: their commands run as written, against a fresh
local host, and their links lead somewhere.

The developer guide's walkthrough (a shell block) runs in bash (curl included, failing on any HTTP error),
then the example day's HQ commands and push script (examples/README.md) run against the same data, as a
newcomer who tries one after the other would: the two must not collide, and the day must reach MATCHED.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, start_host

README = ROOT / "README.md"
EXAMPLES_README = ROOT / "examples" / "README.md"
DEVELOPER_GUIDE = ROOT / "docs" / "developer-guide.md"
GUIDES = [ROOT / "docs" / name for name in ("partner-guide.md", "operator-guide.md", "developer-guide.md")]


def shell_block(markdown: Path, heading: str) -> str:
    """The first ```sh block after the heading."""
    text = markdown.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def run_bash(script: str, env: dict) -> subprocess.CompletedProcess:
    # As written, except the interpreter (the one running the tests) and curl, which fails on an HTTP
    # error instead of printing it and going on.
    prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; echo; }\n'
    script = script.replace(".venv/bin/python", f'"{sys.executable}"')
    return subprocess.run(
        ["bash", "-c", prelude + script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def fresh_host(tmp_path_factory):
    running = start_host(tmp_path_factory.mktemp("readme"))
    yield running
    running.stop()


def test_the_walkthrough_then_the_example_day_run_as_written(fresh_host):
    walkthrough = shell_block(DEVELOPER_GUIDE, "## Walkthrough (local)")
    walkthrough = walkthrough.replace("BASE=http://127.0.0.1:7071/pos/v1", f"BASE={fresh_host.base_url}")
    assert f"BASE={fresh_host.base_url}" in walkthrough, "the walkthrough no longer sets BASE as expected"
    ran = run_bash(walkthrough, fresh_host.env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    answers = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    writes = [answer for answer in answers if "batch_id" in answer and "status" in answer]
    assert len(writes) == 5 and all(answer["status"] == "ACCEPTED" for answer in writes), ran.stdout
    assert all(answer["warnings"] == [] for answer in writes), ran.stdout
    # the day: RECEIVED, then reconciled by hq, MATCHED (decision 0009: the walkthrough goes to the daily close)
    days = [answer for answer in answers if "differences" in answer]
    assert [day["status"] for day in days] == ["RECEIVED", "MATCHED"], ran.stdout

    # The example day's HQ set-up, as examples/README.md has it, on the same data.
    setup = shell_block(EXAMPLES_README, "## Running it against `make run`")
    hq_lines = [line for line in setup.splitlines() if line.startswith(".venv/bin/python -m hq")]
    assert len(hq_lines) == 3, setup
    onboarded = run_bash("\n".join(hq_lines), fresh_host.env)
    assert onboarded.returncode == 0, onboarded.stdout + onboarded.stderr
    key = onboarded.stdout.strip().splitlines()[-1]

    pushed = subprocess.run(
        [sys.executable, "examples/push_day.py", "--base-url", fresh_host.base_url, "--timeout", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "POS_API_KEY": key},
    )
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert "result: all 2 store-day(s) MATCHED" in pushed.stdout
    assert key not in pushed.stdout + pushed.stderr


def test_the_quickstart_is_two_commands_and_says_what_a_machine_needs():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    assert first_block.split("\n")[:2] == ["make run", "make test"] and first_block.count("\n") == 2
    needs = text[: text.index("\n## ")]  # before the first section
    production = re.search(r"^PRODUCTION_PYTHON := (\S+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    for word in (f"Python {production.group(1)}", "make", "Node.js", "npm"):
        assert word in needs, word


def test_the_readme_is_short_and_sends_each_reader_to_a_guide():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 120
    for guide in GUIDES:
        assert f"](docs/{guide.name})" in text, guide.name
        opening = guide.read_text(encoding="utf-8").split("\n## ", 1)[0]
        assert opening.count("](#") >= 3, f"{guide.name} opens with who it is for and a table of contents"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(markdown: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", markdown.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(heading) for heading in re.findall(r"^#+ (.*)$", text, re.M)}


def _markdown_files() -> list[Path]:
    return [README, EXAMPLES_README, *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_readme_never_points_outside_the_repository():
    assert len(sorted((ROOT / "docs" / "decisions").glob("*.md"))) > 1, "docs/decisions/ holds the records"
    for markdown in _markdown_files():
        text = markdown.read_text(encoding="utf-8")
        assert "../shared" not in text and "shared/spec" not in text, markdown
        assert not re.search(r"\bspec(ification)? (section )?[0-9]", text), markdown
        for target, anchor in re.findall(r"\]\(([^)#]*)(?:#([^)]*))?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # an absolute URL
            resolved = (markdown.parent / target).resolve() if target else markdown
            assert resolved.is_relative_to(ROOT) and resolved.exists(), f"{markdown.name}: {target}"
            if anchor and resolved.suffix == ".md":
                assert anchor in _anchors(resolved), f"{markdown.name}: {target}#{anchor}"


def test_the_developer_guide_says_which_cosmos_db_emulator_the_tests_use_and_what_it_lacks():
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    emulator = next(name for name in package["devDependencies"] if "cosmos" in name)
    text = DEVELOPER_GUIDE.read_text(encoding="utf-8")
    assert f"`{emulator}`" in text
    for limit in ("throttling", "request charges", "consistency"):
        assert limit in text, limit
