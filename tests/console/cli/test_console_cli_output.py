"""the command line for people and for scripts. A table on a terminal, one JSON
object with --json or off a terminal; `sessions list`, `audit list`, `rollback ... --dry-run`; a
one-line hint instead of a traceback when the database is not migrated. Real processes where a
terminal matters (a pseudo-terminal from the pty module)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import uuid
from pathlib import Path

import sqlalchemy as sa

from console.cli.common import human
from jobs.refinement import run_refinement
from models import AgentMemory, AuditLog, db
from models.changes.mutations import create_memory
from tests.conftest import DB_KIND, PG_ADMIN_URL

ROOT = Path(__file__).resolve().parents[3]


def _agent_with_a_duplicate(make_agent, name: str = "cli-agent"):
    agent = make_agent(name, core_token_budget=5000)
    for text in (
        "The weekly sync is on Tuesday.",
        "the weekly sync is on Tuesday!",
        "The office is in Lyon.",
    ):
        create_memory(agent.id, text, actor="admin:seed")
    for i in range(10):
        create_memory(agent.id, f"Fact {i}: project {i} ships in week {i + 10}.", actor="admin:seed")
    db.session.commit()
    return agent


def _flask(app, *args: str, tty: bool, database_url: str | None = None) -> tuple[int, str, str]:
    """Run `flask --app wsgi ARGS` in a real process; stdout on a pseudo-terminal when `tty`."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url or app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": app.extensions["rq"].url or "redis://127.0.0.1:6379/0",
        "SECRET_KEY": "test",
        "COLUMNS": "200",
    }
    command = [sys.executable, "-m", "flask", "--app", "wsgi", *args]
    if not tty:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done writing
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    stderr = process.stderr.read().decode()
    process.stderr.close()
    process.wait(timeout=120)
    return process.returncode, b"".join(chunks).decode().replace("\r\n", "\n"), stderr


def test_a_terminal_gets_a_table_and_json_comes_with_the_flag_or_off_a_terminal(app, make_agent, redis_conn):
    agent = _agent_with_a_duplicate(make_agent)
    code, out, err = _flask(app, "agent", "list", tty=True)
    assert code == 0, err
    title, header, rule, row = out.strip().splitlines()[:4]
    assert title == "agents:"
    assert header.split()[:3] == ["id", "name", "role"] and set(rule.replace(" ", "")) == {"-"}
    assert "cli-agent" in row and "{" not in out
    code, out, err = _flask(app, "agent", "list", "--json", tty=True)
    assert code == 0, err
    assert json.loads(out)["agents"][0]["name"] == agent.name
    code, out, err = _flask(app, "agent", "list", tty=False)
    assert code == 0 and json.loads(out)["agents"][0]["id"] == agent.id


def test_human_output_aligns_fields_and_tables():
    text = human(
        {"session_id": 7, "status": "completed", "rows": [{"id": 1, "name": "a"}, {"id": 22, "name": "bb"}]}
    )
    lines = text.splitlines()
    assert lines[0] == "session id  7" and lines[1] == "status      completed"
    assert lines[3:] == ["rows:", "id  name", "--  ----", " 1  a", "22  bb"]


def test_sessions_list_and_audit_list_report_metadata(app, runner, make_agent, redis_conn):
    agent = _agent_with_a_duplicate(make_agent)
    result = run_refinement(agent.id, "cli", force=True)
    db.session.commit()
    sessions = json.loads(runner.invoke(args=["sessions", "list", agent.name]).stdout)["sessions"]
    assert [(s["id"], s["status"], s["ops"]) for s in sessions] == [(result["session_id"], "completed", 1)]
    only_failed = json.loads(runner.invoke(args=["sessions", "list", "--status", "failed"]).stdout)
    assert only_failed == {"sessions": []}
    ops = json.loads(runner.invoke(args=["audit", "list", agent.name, "--limit", "500"]).stdout)["operations"]
    stored = db.session.scalar(
        sa.select(sa.func.count(sa.distinct(AuditLog.op_id))).where(AuditLog.agent_id == agent.id)
    )
    assert len(ops) == stored and ops[0]["agent"] == agent.name
    merges = json.loads(
        runner.invoke(
            args=["audit", "list", "--session", str(result["session_id"]), "--action", "consolidate"]
        ).stdout
    )["operations"]
    assert (
        len(merges) == 1
        and merges[0]["session"] == result["session_id"]
        and merges[0]["core_token_delta"] < 0
    )
    text = json.dumps(ops)
    assert "weekly sync" not in text.lower()  # metadata only


def test_rollback_dry_run_states_the_counts_and_changes_nothing(app, runner, make_agent, redis_conn):
    agent = _agent_with_a_duplicate(make_agent)
    result = run_refinement(agent.id, "cli", force=True)
    db.session.commit()
    records = db.session.scalar(sa.select(sa.func.count()).select_from(AuditLog))
    active = db.session.scalar(
        sa.select(sa.func.count()).where(AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_(None))
    )
    out = runner.invoke(args=["rollback", "session", str(result["session_id"]), "--dry-run"])
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)
    # the two merged sources come back; the merged memory and the session's journal entry go
    assert plan["dry_run"] is True and (plan["restored"], plan["removed"], plan["memories"]) == (2, 2, 4)
    db.session.expire_all()
    assert db.session.scalar(sa.select(sa.func.count()).select_from(AuditLog)) == records
    assert (
        db.session.scalar(
            sa.select(sa.func.count()).where(
                AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_(None)
            )
        )
        == active
    )
    applied = json.loads(runner.invoke(args=["rollback", "session", str(result["session_id"])]).stdout)
    assert (applied["restored"], applied["removed"]) == (plan["restored"], plan["removed"])


def test_an_unmigrated_database_gets_a_one_line_hint_not_a_traceback(app, tmp_path, redis_conn):
    if DB_KIND == "postgresql":
        name = f"memconsole_empty_{uuid.uuid4().hex[:8]}"
        admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    else:
        url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    try:
        for args in (("demo",), ("agent", "list"), ("sessions", "list")):
            code, out, err = _flask(app, *args, tty=False, database_url=url)
            assert code == 1 and out == ""
            assert err.strip().splitlines() == [
                "error: the database has no tables yet: run `flask --app wsgi db upgrade` first (scripts/up.sh does it)"
            ], err
    finally:
        if DB_KIND == "postgresql":
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
