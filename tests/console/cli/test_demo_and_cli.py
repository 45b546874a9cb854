"""The command line (agent, memory import, admin, rollback) and the `demo` seed, end to end."""

from __future__ import annotations

import collections
import json
import random
import re
import shlex
import time
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from console.cli.demo import data as demo_data
from console.cli.demo import plan as demo_plan
from console.cli.demo import seed as demo_seed
from jobs.chat import OFFLINE_LABEL
from jobs.offline import OfflineRefiner
from models import Agent, AgentMemory, AuditContent, AuditLog, RefinementSession, User, db, utcnow
from models.agents.agent import hash_token
from models.changes.dedup import dedup_for_agent
from models.changes.mutations import consolidate_memories, soft_delete_memories, update_memory
from models.history.session import STATS
from models.memories.categories import load_config
from models.memories.memory import SNAPSHOT_FIELDS

CANARY = "CANARY-7f3a"

# ----- helpers -----


def _count(model) -> int:
    return db.session.scalar(sa.select(sa.func.count()).select_from(model))


def _counts() -> dict[str, int]:
    db.session.expire_all()
    return {
        m.__tablename__: _count(m)
        for m in (Agent, AgentMemory, AuditLog, AuditContent, RefinementSession, User)
    }


def _ok(result) -> dict:
    """A successful command: exit 0 and exactly one JSON object on stdout."""
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0])


def _clean_failure(result) -> None:
    """A refused command: non-zero exit through sys.exit with an `error:` line, never a traceback."""
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert "error:" in result.output


def _row_state(memory_id: int) -> dict:
    """Every column of a memory row, read fresh from the database."""
    db.session.expire_all()
    row = db.session.get(AgentMemory, memory_id)
    return {c.key: getattr(row, c.key) for c in sa.inspect(AgentMemory).column_attrs}


def _iso_z(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds") + "Z"


def _between_changes() -> datetime:
    """A point in time strictly after every change so far and strictly before the next one."""
    time.sleep(0.01)
    moment = utcnow()
    time.sleep(0.01)
    return moment


def _state_at(agent_id: int, moment: datetime) -> dict[int, dict | None]:
    """Each memory of the agent as the audit log says it was at `moment` (None: it did not exist yet)."""
    records = db.session.scalars(
        sa.select(AuditLog)
        .where(AuditLog.agent_id == agent_id, AuditLog.memory_id.is_not(None))
        .order_by(AuditLog.id)
    ).all()
    state: dict[int, dict | None] = {}
    for record in records:
        state.setdefault(record.memory_id, None)
        if record.created_at <= moment:
            state[record.memory_id] = record.after
    return state


def _matches_snapshot(row: AgentMemory, snap: dict | None) -> bool:
    """Whether the row is exactly what the snapshot describes (None: a row that should not be active)."""
    if snap is None:
        return row.deleted_at is not None
    for name in SNAPSHOT_FIELDS:
        value = getattr(row, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        if value != snap[name]:
            return False
    return row.content == db.session.get(AuditContent, snap["content_ref"]).content


def _active_core_tokens(snapshots) -> int:
    return sum(
        s["token_estimate"] for s in snapshots if s and s["memory_type"] == "core" and s["deleted_at"] is None
    )


def _write_jsonl(path, lines: list) -> str:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return str(path)


def _run_demo(runner) -> dict:
    return _ok(runner.invoke(args=["demo"], catch_exceptions=False))


# ----- agent -----


def test_agent_create_prints_id_and_token_and_stores_only_the_token_hash(runner):
    out = _ok(runner.invoke(args=["agent", "create", "zed", "--budget", "300", "--role", "planner"]))
    token = out["token"]
    agent = db.session.get(Agent, out["id"])
    assert (agent.name, agent.core_token_budget, agent.role) == ("zed", 300, "planner")
    assert agent.api_token_hash == hash_token(token)
    assert Agent.by_token(token).id == agent.id
    raw = db.session.execute(sa.text("SELECT * FROM agents WHERE id = :id"), {"id": agent.id}).one()
    assert all(token not in str(value) for value in raw)


def test_agent_create_with_a_taken_name_fails_clearly_and_creates_nothing(runner, make_agent):
    make_agent("zed")
    before = _counts()
    result = runner.invoke(args=["agent", "create", "zed"])
    _clean_failure(result)
    assert "already exists" in result.output
    assert result.stdout == ""
    assert _counts() == before


def test_rotate_token_invalidates_the_old_token(runner):
    old = _ok(runner.invoke(args=["agent", "create", "zed"]))["token"]
    new = _ok(runner.invoke(args=["agent", "rotate-token", "zed"]))["token"]
    db.session.expire_all()
    assert new != old
    assert Agent.by_token(old) is None
    assert Agent.by_token(new).name == "zed"


# ----- memory import -----


def test_memory_import_keeps_origin_dates_and_metadata_and_audits_each_line(runner, make_agent, tmp_path):
    agent = make_agent("importer")
    path = _write_jsonl(
        tmp_path / "good.jsonl",
        [
            {
                "content": "User Maya prefers concise answers.",
                "created_at": "2024-03-01T10:00:00Z",
                "tags": ["pref"],
            },
            {
                "content": "I never share private details.",
                "created_at": "2024-03-01T12:30:00+02:00",
                "constitutional": True,
            },
            "",
            {
                "content": "Atlas ships on June 3.",
                "memory_type": "semantic",
                "category": "projects",
                "importance": 4,
                "created_at": "2023-12-31T23:59:59.250000-05:00",
            },
        ],
    )
    out = _ok(runner.invoke(args=["memory", "import", "importer", path]))
    assert out["imported"] == 3
    rows = db.session.scalars(
        sa.select(AgentMemory).where(AgentMemory.agent_id == agent.id).order_by(AgentMemory.id)
    ).all()
    assert [r.created_at for r in rows] == [
        datetime(2024, 3, 1, 10, 0),
        datetime(2024, 3, 1, 10, 30),
        datetime(2024, 1, 1, 4, 59, 59, 250000),
    ]
    assert rows[0].tags == ["pref"] and rows[0].memory_type == "core" and not rows[0].constitutional
    assert rows[1].constitutional is True
    assert (rows[2].memory_type, rows[2].category, rows[2].importance) == ("semantic", "projects", 4)
    records = db.session.scalars(sa.select(AuditLog).where(AuditLog.agent_id == agent.id)).all()
    assert sorted(r.memory_id for r in records) == [r.id for r in rows]
    assert {(r.action, r.actor) for r in records} == {("import", "admin:cli")}


def test_memory_import_lists_every_bad_line_without_content_and_imports_nothing(runner, make_agent, tmp_path):
    make_agent("importer")
    path = _write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"content": "A perfectly good memory."},  # 1
            '{"content": "' + CANARY + " never closed",  # 2 bad JSON
            {"content": "   "},  # 3 empty
            {"content": CANARY + "x" * (10_001 - len(CANARY))},  # 4 too long
            {"content": CANARY + " dreaming", "memory_type": "dream"},  # 5 unknown type
            {"content": CANARY + " very important", "importance": 9},  # 6 importance out of range
            {"content": CANARY + " with extras", "mood": CANARY},  # 7 unknown field
            [CANARY, "not an object"],  # 8
            {"content": "Another good memory."},  # 9
        ],
    )
    before = _counts()
    result = runner.invoke(args=["memory", "import", "importer", path])
    _clean_failure(result)
    assert "7 bad line(s); nothing was imported" in result.output
    for number in range(2, 9):
        assert f"line {number}:" in result.stderr
    assert "line 1:" not in result.output and "line 9:" not in result.output
    assert CANARY not in result.output
    assert "good memory" not in result.output
    assert _counts() == before


# ----- admin -----


def test_admin_create_reads_password_from_stdin_and_stores_only_its_hash(runner):
    out = _ok(runner.invoke(args=["admin", "create", "Root@Example.com"], input="long-enough-password\n"))
    user = db.session.get(User, out["id"])
    assert user.email == "root@example.com"
    assert "long-enough-password" not in user.password_hash
    assert user.check_password("long-enough-password")
    assert not user.check_password("long-enough-passwore")


def test_admin_create_refuses_a_short_password_and_creates_no_user(runner):
    result = runner.invoke(args=["admin", "create", "root@example.com"], input="short\n")
    _clean_failure(result)
    assert "at least 10 characters" in result.output
    assert _count(User) == 0


# ----- rollback -----


def test_rollback_agent_to_a_point_in_time_restores_every_column(runner, make_agent, make_memory):
    agent = make_agent("zed")
    kept = make_memory(agent, "Maya prefers tea.", tags=["pref"], importance=2)
    gone = make_memory(agent, "The launch is on May 4.")
    at_checkpoint = {m.id: _row_state(m.id) for m in (kept, gone)}
    checkpoint = _between_changes()
    update_memory(
        agent.id, kept.id, actor="admin:test", content="Maya prefers coffee now.", tags=["pref", "x"]
    )
    soft_delete_memories(agent.id, [gone.id], actor="admin:test")
    added = make_memory(agent, "A memory from after the checkpoint.")
    assert _row_state(kept.id) != at_checkpoint[kept.id]

    out = _ok(runner.invoke(args=["rollback", "agent", "zed", "--to", _iso_z(checkpoint)]))

    assert out["rollback_of"] == "point_in_time" and out["removed"] == 1 and out["restored"] == 2
    assert {m: _row_state(m) for m in at_checkpoint} == at_checkpoint
    assert _row_state(added.id)["deleted_at"] is not None
    assert agent.core_token_usage == kept.token_estimate + gone.token_estimate


def test_rollback_session_undoes_the_session_consolidation(runner, make_agent, make_memory):
    agent = make_agent("zed")
    first = make_memory(agent, "Maya prefers tea.")
    second = make_memory(agent, "maya prefers tea.")
    before = {m.id: _row_state(m.id) for m in (first, second)}
    session = RefinementSession(agent_id=agent.id, trigger="test", status="completed")
    db.session.add(session)
    db.session.commit()
    merged = consolidate_memories(
        agent.id, [first.id, second.id], "Maya prefers tea.", actor="agent", session_id=session.id
    )

    out = _ok(runner.invoke(args=["rollback", "session", str(session.id)]))

    assert (out["session_id"], out["restored"], out["removed"]) == (session.id, 2, 1)
    assert {m: _row_state(m) for m in before} == before
    assert _row_state(merged.id)["deleted_at"] is not None


def test_rollback_op_restores_the_row_and_can_itself_be_rolled_back(runner, make_agent, make_memory):
    agent = make_agent("zed")
    memory = make_memory(agent, "Maya prefers tea.", importance=2)
    original = _row_state(memory.id)
    update_memory(agent.id, memory.id, actor="admin:test", content="Maya prefers coffee.", importance=5)
    updated = _row_state(memory.id)
    op_id = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.action == "update"))

    undo = _ok(runner.invoke(args=["rollback", "op", op_id]))
    assert _row_state(memory.id) == original

    _ok(runner.invoke(args=["rollback", "op", undo["op_id"]]))
    assert _row_state(memory.id) == updated


@pytest.mark.parametrize("when", ["yesterday", "2026-13-45", ""])
def test_rollback_agent_with_a_bad_time_fails_cleanly_and_changes_nothing(
    runner, make_agent, make_memory, when
):
    agent = make_agent("zed")
    make_memory(agent, "Maya prefers tea.")
    before = _counts()
    result = runner.invoke(args=["rollback", "agent", "zed", "--to", when])
    _clean_failure(result)
    assert "ISO 8601" in result.output
    assert _counts() == before


def test_rollback_of_an_unknown_session_or_agent_fails_cleanly(runner):
    result = runner.invoke(args=["rollback", "session", "999"])
    _clean_failure(result)
    assert "refinement session 999 not found" in result.output
    result = runner.invoke(args=["rollback", "agent", "nobody", "--to", "2026-01-01T00:00:00Z"])
    _clean_failure(result)
    assert "no agent named" in result.output


# ----- demo -----


def test_demo_seeds_agents_memories_duplicates_and_an_audit_history(runner):
    out = _run_demo(runner)

    agents = {a["name"]: a for a in out["agents"]}
    assert len(agents) >= 5
    assert {a["role"] for a in agents.values()} == {
        "supervisor",
        "planner",
        "stylist",
        "researcher",
        "executor",
    }
    assert out["memories"] >= 400 and out["memories"] == _count(AgentMemory)
    rows = {name: db.session.get(Agent, a["id"]) for name, a in agents.items()}
    assert all(r.model_id is None and r.api_token_hash for r in rows.values())
    over = [name for name, r in rows.items() if r.needs_refinement]
    assert len(over) >= 2 and len(over) < len(rows)
    assert sorted(over) == sorted(name for name, a in agents.items() if a["over_budget"])
    for name, row in rows.items():
        assert agents[name]["core_tokens"] == row.core_token_usage
        constitutional = db.session.scalar(
            sa.select(sa.func.count()).select_from(AgentMemory.constitutional_scope(row.id).subquery())
        )
        assert constitutional >= 2 and constitutional == agents[name]["constitutional"]

    memories = db.session.scalars(sa.select(AgentMemory)).all()
    assert {m.memory_type for m in memories} >= {"core", "journal", "semantic", "episodic"}
    assert {t for m in memories for t in m.tags} >= {"voice", "audio", "somatic"}
    week_ago = utcnow() - timedelta(days=7)
    assert any(m.memory_type == "journal" and m.created_at >= week_ago for m in memories)
    assert any(m.category and m.importance for m in memories if m.memory_type in ("semantic", "episodic"))
    origins = [m.created_at for m in memories]
    assert max(origins) - min(origins) > timedelta(days=180)

    # Dedup ran for some agents and left exact duplicates (case/whitespace variants included) for others.
    duplicates = {name: _exact_duplicates(row.id) for name, row in rows.items()}
    assert any(duplicates.values()) and not all(duplicates.values())
    assert duplicates == {name: a["exact_duplicates"] for name, a in agents.items()}
    spellings: dict[tuple[int, str], set[str]] = {}
    for memory in memories:
        if memory.memory_type == "core" and memory.deleted_at is None:
            spellings.setdefault((memory.agent_id, memory.content_hash), set()).add(memory.content)
    assert any(len(texts) > 1 for texts in spellings.values())  # case variants share the hash

    actions = set(db.session.scalars(sa.select(AuditLog.action).distinct()))
    assert actions >= {
        "import",
        "dedup",
        "update",
        "delete",
        "restore",
        "consolidate",
        "consolidate_source",
        "protect",
    }
    session = db.session.get(RefinementSession, out["sessions"][0])
    imports = db.session.scalars(sa.select(AuditLog).where(AuditLog.action == "import")).all()
    # Seeded vows are set as an operator would (admin:demo); every other memory is a system import, except
    # the memories the session's merges made and its journal.
    assert {r.actor for r in imports} == {"system:demo", "admin:demo"}
    assert len(imports) == out["memories"] - session.stats["consolidations"] - 1


def test_demo_session_is_a_real_refinement_session(runner):
    out = _run_demo(runner)
    session = db.session.get(RefinementSession, out["sessions"][0])
    basil = Agent.lookup("basil")
    # The real job with the offline refiner: dedup before the baseline, consent, merges, complete.
    assert (session.agent_id, session.trigger, session.model) == (basil.id, "demo", OFFLINE_LABEL)
    assert (session.status, session.phase, session.error) == ("completed", "completed", None)
    assert session.llm_turns == 3  # the consent, the merges, complete_refinement
    assert set(session.stats) == {
        "dedup_removed",
        "dedup_tokens",
        "consent_reason_chars",
        "consolidations",
        "consolidated",
    } and set(session.stats) <= set(STATS)
    merges = session.stats["consolidations"]
    assert session.ops_count == merges >= 2 and session.stats["consolidated"] == 2 * merges
    assert session.count_after == session.count_before - merges
    assert session.tokens_after < session.tokens_before and session.summary.startswith("Offline refiner")
    actions = collections.Counter(
        db.session.scalars(sa.select(AuditLog.action).where(AuditLog.session_id == session.id))
    )
    assert actions == {
        "refinement_consent": 1,
        "consolidate": merges,
        "consolidate_source": 2 * merges,
        "refinement_journal": 1,
        "refinement_complete": 1,
    }
    summary = {a["name"]: a for a in out["agents"]}["basil"]
    assert _exact_duplicates(basil.id) == 0 == summary["exact_duplicates"]
    assert basil.last_refinement_at == session.finished_at and basil.needs_refinement  # still over budget


def test_demo_leaves_restated_memories_for_a_refinement_of_another_agent(runner):
    _run_demo(runner)
    result = _ok(runner.invoke(args=["refine", "ada", "--now"]))
    assert result["status"] == "completed" and result["ops"] >= 1
    assert result["stats"]["consolidations"] == result["ops"] and "dedup_removed" not in result["stats"]


def test_demo_categories_are_the_ones_the_real_allowlists_give_each_role(runner):
    out = _run_demo(runner)
    config = load_config()  # console/allowlists.yaml: what the agent API enforces
    used: dict[str, set[str]] = {}
    for agent in out["agents"]:
        categories = set(
            db.session.scalars(
                sa.select(AgentMemory.category).where(
                    AgentMemory.agent_id == agent["id"], AgentMemory.category.is_not(None)
                )
            )
        )
        config.check(agent["role"], categories)  # raises CategoryNotAllowed naming any outside it
        used[agent["role"]] = categories
    assert all(used.values())  # every agent has categorised memories
    # The categories only some roles may use go to those roles.
    assert "relationship_dynamic" in used["supervisor"] and "procedural" in used["planner"] | used["executor"]


def test_demo_dedup_merges_exact_duplicates_but_never_near_duplicates(runner):
    out = _run_demo(runner)

    near = {}  # memories that differ only in a number (near-duplicates), grouped by their shape
    for memory in db.session.scalars(AgentMemory.active(None).where(AgentMemory.memory_type == "core")):
        near.setdefault((memory.agent_id, re.sub(r"\d+", "#", memory.content.lower())), set()).add(
            memory.content_hash
        )
    near_groups = [hashes for hashes in near.values() if len(hashes) > 1]
    assert near_groups

    removed = sum(len(dedup_for_agent(a["id"])) for a in out["agents"])

    assert removed == sum(a["exact_duplicates"] for a in out["agents"]) > 0
    assert all(not _exact_duplicates(a["id"]) for a in out["agents"])
    active = set(
        db.session.scalars(sa.select(AgentMemory.content_hash).where(AgentMemory.deleted_at.is_(None)))
    )
    assert all(hashes <= active for hashes in near_groups)


def test_demo_output_is_metadata_only(runner):
    result = runner.invoke(args=["demo"], catch_exceptions=False)
    out = _ok(result)
    contents = db.session.scalars(sa.select(AgentMemory.content)).all()
    assert len(contents) == out["memories"]
    for content in random.Random(0).sample(contents, 50) + list(demo_data.VOWS):
        assert content not in result.output
    assert "mgc_" not in result.output  # no API token either


def test_demo_twice_fails_cleanly_and_changes_nothing(runner):
    _run_demo(runner)
    before = _counts()
    result = runner.invoke(args=["demo"])
    _clean_failure(result)
    assert "demo data already present; use a fresh database" in result.output
    assert _counts() == before


def test_demo_that_fails_midway_leaves_nothing_behind(app, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(demo_seed, "restore_memory", broken)
    with pytest.raises(RuntimeError):
        demo_seed.seed_demo()
    db.session.rollback()
    assert set(_counts().values()) == {0}


def test_demo_whose_session_fails_leaves_nothing_behind(app, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("model gone")

    monkeypatch.setattr(OfflineRefiner, "turn", broken)
    with pytest.raises(RuntimeError, match="refinement session failed"):
        demo_seed.seed_demo()
    db.session.rollback()
    assert set(_counts().values()) == {0}


def test_demo_rollback_example_restores_the_checkpoint_state(runner):
    out = _run_demo(runner)
    checkpoint = datetime.fromisoformat(out["checkpoint"].removesuffix("Z"))
    command = shlex.split(out["rollback_example"])
    assert command[:3] == ["flask", "--app", "wsgi"] and command[-1] == out["checkpoint"]
    agent = Agent.lookup(command[5])
    expected = _state_at(agent.id, checkpoint)
    imported = db.session.scalars(sa.select(AuditLog.created_at).where(AuditLog.action == "import")).all()
    later = db.session.scalars(sa.select(AuditLog.created_at).where(AuditLog.action != "import")).all()
    assert max(imported) < checkpoint < min(later)
    changed = [
        m for m, snap in expected.items() if not _matches_snapshot(db.session.get(AgentMemory, m), snap)
    ]
    assert len(changed) >= 4  # the later history touched this agent

    result = _ok(runner.invoke(args=command[3:]))

    db.session.expire_all()
    assert result["restored"] == len(changed)
    assert all(_matches_snapshot(db.session.get(AgentMemory, m), snap) for m, snap in expected.items())
    assert agent.core_token_usage == _active_core_tokens(expected.values()) == result["tokens_after"]


def test_demo_session_can_be_rolled_back(runner):
    out = _run_demo(runner)
    session_id = out["sessions"][0]
    records = db.session.scalars(
        sa.select(AuditLog).where(AuditLog.session_id == session_id).order_by(AuditLog.id)
    ).all()
    first_before = {}
    for record in records:
        if record.memory_id is not None:
            first_before.setdefault(record.memory_id, record.before)

    result = _ok(runner.invoke(args=["rollback", "session", str(session_id)]))

    db.session.expire_all()
    # The session ran through the real toolbox: its merges, and the journal complete_refinement writes.
    created = sum(snap is None for snap in first_before.values())
    merges = db.session.get(RefinementSession, session_id).stats["consolidations"]
    assert created == merges + 1
    assert (result["removed"], result["restored"]) == (created, len(first_before) - created)
    for memory_id, snap in first_before.items():
        row = db.session.get(AgentMemory, memory_id)
        if snap is None:
            assert row.deleted_at is not None  # the consolidated memory did not exist before the session
        else:
            assert _matches_snapshot(row, snap)


def test_demo_content_is_deterministic_for_a_seed(app):
    now = datetime(2026, 1, 1)
    allowed = load_config().allowed_for("planner")
    plan = [s.content for s in demo_plan.plan_agent(random.Random(7), "planner", now, allowed)]
    again = [s.content for s in demo_plan.plan_agent(random.Random(7), "planner", now, allowed)]
    other = [s.content for s in demo_plan.plan_agent(random.Random(8), "planner", now, allowed)]
    assert plan == again != other


def _exact_duplicates(agent_id: int) -> int:
    """Active core rows that share a content hash with another one: what dedup would remove."""
    counts = db.session.scalars(
        sa.select(sa.func.count())
        .where(
            AgentMemory.agent_id == agent_id,
            AgentMemory.memory_type == "core",
            AgentMemory.deleted_at.is_(None),
        )
        .group_by(AgentMemory.content_hash)
    ).all()
    return sum(c - 1 for c in counts)
