"""The README's and the tutorial's examples run as printed, against a live console.

Every fenced block of README.md and docs/tutorial.md runs, in order, as a reader runs them in one terminal:
`bash` blocks with bash (`-e -o pipefail`; each sees the shell variables the ones before it set, exported
or not), `python` blocks with `.venv/bin/python` in that same environment. The working directory is a scratch one whose `.venv`
is the repository's, so `.venv/bin/memconsole ...` means what it says; the CLI reaches the server's database
through DATABASE_URL and REDIS_URL. The one substitution: the console's address in the docs,
http://127.0.0.1:5000, becomes the test server's (the snippets read it from MEMCONSOLE_URL, as the client
does). Before the README's blocks run, the database gets what `scripts/up.sh` gives it (the demo data).

A block that cannot run here is listed in NOT_RUN with its reason; an entry that matches no block fails.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS_URL = "http://127.0.0.1:5000"
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```$", re.S | re.M)
# Blocks (found by a line they hold) that the test does not run, and why.
NOT_RUN = {
    "bash scripts/up.sh": "starts the console, a worker and the scheduler, and stays up; the test's server "
    "and its demo data stand in for it (and the same block names scripts/test.sh, the suite itself)",
}
LANGUAGES = {"bash": "bash", "python": "python"}
# The shell's variables a block leaves for the next (a terminal keeps them): plain and exported ones, not
# bash's own (read-only, arrays, the working directory).
KEEP_VARIABLES = (
    "{ declare -p | grep -E '^declare -[-x] [A-Za-z_][A-Za-z0-9_]*=' "
    "| grep -vE '^declare -[-x] (_|PWD|OLDPWD|SHLVL|BASH[A-Z_]*)=' || true; }"
)


def fenced_blocks(path: Path) -> list[tuple[str, str]]:
    """(language, code) of every fenced block in the file, in order."""
    return [(lang, code) for lang, code in FENCE.findall(path.read_text(encoding="utf-8"))]


def _skipped(code: str) -> str | None:
    return next((key for key in NOT_RUN if key in code), None)


def _run_examples(doc: Path, port: int, database_url: str, redis_url: str, workdir: Path) -> None:
    (workdir / ".venv").symlink_to(ROOT / ".venv")
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": "test-secret",
        "EMBEDDINGS": "hashed",
        "NO_COLOR": "1",
    }
    env.pop("MEMCONSOLE_URL", None)
    env.pop("MEMCONSOLE_TOKEN", None)
    state = workdir / "exported.sh"
    state.write_text("")
    for number, (lang, code) in enumerate(fenced_blocks(doc), 1):
        if _skipped(code):
            continue
        assert lang in LANGUAGES, (
            f"{doc.name} block {number}: a ```{lang} block; run it here or list it in NOT_RUN"
        )
        code = code.replace(DOCS_URL, f"http://127.0.0.1:{port}")
        if lang == "bash":
            script = (
                f"source {shlex.quote(str(state))}\n{code}\n{KEEP_VARIABLES} > {shlex.quote(str(state))}\n"
            )
        else:
            source = workdir / f"block_{number}.py"
            source.write_text(code, encoding="utf-8")
            script = f"source {shlex.quote(str(state))}\nexec .venv/bin/python {shlex.quote(str(source))}\n"
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, (
            f"{doc.name} block {number} ({lang}) failed with status {done.returncode}:\n{code}\n"
            f"--- stdout\n{done.stdout[-2000:]}\n--- stderr\n{done.stderr[-3000:]}"
        )


def test_every_block_the_docs_do_not_run_is_listed_once_with_its_reason():
    blocks = [code for doc in ("README.md", "docs/tutorial.md") for _, code in fenced_blocks(ROOT / doc)]
    for key in NOT_RUN:
        assert sum(key in code for code in blocks) == 1, f"NOT_RUN entry {key!r} matches no block, or several"


def _up(app, redis_url) -> None:
    """What scripts/up.sh gives a fresh clone's database before the README's tour: the demo data."""
    env = {**os.environ, "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"], "REDIS_URL": redis_url,
           "SECRET_KEY": "test-secret"}  # fmt: skip
    subprocess.run([str(ROOT / ".venv/bin/memconsole"), "demo", "--skip-if-present"], cwd=ROOT, env=env,
                   check=True, capture_output=True, timeout=180)  # fmt: skip


def test_the_readme_runs_as_printed(app, server, redis_url, tmp_path):
    _up(app, redis_url)
    _run_examples(ROOT / "README.md", server, app.config["SQLALCHEMY_DATABASE_URI"], redis_url, tmp_path)


def test_the_tutorial_runs_as_printed(app, server, redis_url, tmp_path):
    _run_examples(
        ROOT / "docs" / "tutorial.md", server, app.config["SQLALCHEMY_DATABASE_URI"], redis_url, tmp_path
    )


@pytest.mark.parametrize("doc", ["README.md", "docs/tutorial.md"])
def test_a_broken_snippet_fails_the_run(app, server, redis_url, tmp_path, doc):
    """The check bites: the same document with one command misspelt fails, at that command's block."""
    broken = tmp_path / "broken.md"
    text = (ROOT / doc).read_text(encoding="utf-8")
    broken.write_text(text.replace("memconsole rollback session", "memconsole rollback sessions", 1))
    assert broken.read_text() != text
    work = tmp_path / "work"
    work.mkdir()
    if doc == "README.md":
        _up(app, redis_url)
    with pytest.raises(AssertionError, match=r"(?s)failed with status.*rollback sessions"):
        _run_examples(broken, server, app.config["SQLALCHEMY_DATABASE_URI"], redis_url, work)


def test_a_command_missing_a_module_says_what_to_install_in_one_line(tmp_path):
    """The CLI as printed: a command whose module is not installed ends with one line, not a traceback."""
    script = (
        "import sys; sys.modules['rq_scheduler'] = None; sys.argv = ['memconsole', 'rq', 'schedule']; "
        "import console; console.main()"
    )
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}", "SECRET_KEY": "test-secret"}
    done = subprocess.run([str(ROOT / ".venv/bin/python"), "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "memconsole: this command needs the Python module 'rq_scheduler', which is not installed here: "
        ".venv/bin/pip install -e ."
    ]
