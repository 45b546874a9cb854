"""The memory fields' rules (models/memories/fields.py): one table sizes the columns and refuses an over-long or
malformed value on every write path (the agent API, a job through the mutation path, an import line,
a model's tool call) with a validation error naming the field, before the database sees it. PostgreSQL
is where an over-long value used to surface as a DataError at commit."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from models import AgentMemory, ValidationFailed, db
from models.changes.mutations import create_memory, update_memory
from models.history.events import OpEvent
from models.history.session import start_session
from models.memories.fields import (
    CATEGORY,
    CONTENT,
    MAX_TAGS,
    MEMORY_TYPE_LENGTH,
    MEMORY_TYPES,
    SCOPE_ID,
    TAG,
    TEXT_RULES,
)
from models.refinement.toolbox import RefinementToolbox
from tests.api_support import bearer, memory_rows

# One over-long (or otherwise broken) value per ruled field, with a valid memory around it.
TOO_LONG = {name: "a" * (rule.max_length + 1) for name, rule in TEXT_RULES.items()}
BROKEN = {
    **TOO_LONG,
    "memory_type": "dream",
    "importance": 6,
    "tags": ["t" * (TAG.max_length + 1)],
}
TOO_MANY_TAGS = [f"t{n}" for n in range(MAX_TAGS + 1)]
VALID = {"content": "The user files taxes in April.", "memory_type": "semantic", "category": "tasks"}


def test_the_columns_are_sized_by_the_rules():
    columns = AgentMemory.__table__.c
    for name, rule in TEXT_RULES.items():
        if name == "content":
            continue  # Text, bounded by the content_length check constraint below
        assert columns[name].type.length == rule.max_length, name
    assert columns["memory_type"].type.length == MEMORY_TYPE_LENGTH >= max(len(t) for t in MEMORY_TYPES)
    checks = [str(c.sqltext) for c in AgentMemory.__table__.constraints if isinstance(c, sa.CheckConstraint)]
    assert f"length(content) BETWEEN 1 AND {CONTENT.max_length}" in checks
    events = OpEvent.__table__.c
    assert events["category"].type.length == CATEGORY.max_length
    assert events["user_id"].type.length == events["thread_id"].type.length == SCOPE_ID.max_length


def test_the_migrated_database_has_the_rules_lengths(app):
    """The Alembic schema the tests run on, not only the models, holds the rules' lengths."""
    columns = {c["name"]: c for c in sa.inspect(db.engine).get_columns("agent_memories")}
    for name, rule in TEXT_RULES.items():
        if name != "content":
            assert columns[name]["type"].length == rule.max_length, name


@pytest.fixture
def agent(make_agent):
    return make_agent(role="executor")


@pytest.mark.parametrize("name", list(BROKEN))
def test_the_api_refuses_with_422_naming_the_field(client, app, agent, name):
    app.config["API_FLUSH_SECONDS"] = 3600
    headers = bearer(agent)
    before = memory_rows()
    response = client.post("/api/v1/memory", json={**VALID, name: BROKEN[name]}, headers=headers)
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert response.get_json()["field"].split(".")[0] == name
    assert memory_rows() == before
    memory = create_memory(
        agent.id, "The user naps at noon.", actor="agent", memory_type="semantic", category="tasks"
    )
    before = memory_rows()
    response = client.patch(f"/api/v1/memory/{memory.id}", json={name: BROKEN[name]}, headers=headers)
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert response.get_json()["field"].split(".")[0] == name
    assert memory_rows() == before


@pytest.mark.parametrize("actor", ["system:extraction", "agent", "admin:test"])
@pytest.mark.parametrize("name", [*BROKEN, "too many tags"])
def test_the_mutation_path_refuses_before_the_database(agent, name, actor):
    """What a job, a patch or the console writes goes through here: ValidationFailed, never DataError."""
    field, value = ("tags", TOO_MANY_TAGS) if name == "too many tags" else (name, BROKEN[name])
    fields = {**VALID, field: value}
    with pytest.raises(ValidationFailed) as refused:
        create_memory(agent.id, fields.pop("content"), actor=actor, **fields)
    assert refused.value.details["field"] == field
    memory = create_memory(agent.id, "The user naps at noon.", actor="admin:test", category="tasks")
    with pytest.raises(ValidationFailed) as refused:
        update_memory(agent.id, memory.id, actor=actor, **{field: value})
    assert refused.value.details["field"] == field
    db.session.rollback()
    assert db.session.get(AgentMemory, memory.id).category == "tasks"


@pytest.mark.parametrize("name", list(BROKEN))
def test_an_import_line_is_refused_naming_the_field(runner, agent, tmp_path, name):
    path = tmp_path / "import.jsonl"
    path.write_text(json.dumps({**VALID, name: BROKEN[name]}) + "\n", encoding="utf-8")
    result = runner.invoke(args=["memory", "import", agent.name, str(path)])
    assert result.exit_code != 0
    assert f"line 1: {name}" in result.output
    assert "nothing was imported" in result.output
    assert db.session.scalar(sa.select(sa.func.count()).select_from(AgentMemory)) == 0


@pytest.mark.parametrize("tool", ["update_memory", "consolidate_memories"])
def test_a_tool_call_is_refused_naming_the_argument(agent, tool):
    first = create_memory(agent.id, "The user naps at noon.", actor="admin:test")
    second = create_memory(agent.id, "The user naps at 12:00.", actor="admin:test")
    session = start_session(agent.id, "manual", model=None)
    db.session.commit()
    content = "a" * (CONTENT.max_length + 1)
    args = (
        {"id": first.id, "content": content}
        if tool == "update_memory"
        else {"ids": [first.id, second.id], "new_content": content}
    )
    result = RefinementToolbox(session.id).call(tool, args)
    assert result["ok"] is False and result["error"] == "bad_arguments"
    assert result["message"].startswith("content:" if tool == "update_memory" else "new_content:")
    assert "aaaa" not in result["message"]
