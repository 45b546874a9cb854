"""docs/how-to/langgraph.md's runnable example, run as written against a running console."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "langgraph.md"


def test_the_langgraph_example_in_the_docs_runs_as_written(live_console, tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    example = next(b for b in blocks if "builder.compile(checkpointer=saver, store=store)" in b)
    script = tmp_path / "example.py"
    script.write_text(example)
    _, token = live_console.agent(role="supervisor")
    env = {"MEMCONSOLE_URL": live_console.base_url, "MEMCONSOLE_TOKEN": token, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == (
        "['remember: The user prefers window seats.', 'I know 1 fact(s) about you.', "
        "'what do you know?', 'I know 1 fact(s) about you.']"
    )
