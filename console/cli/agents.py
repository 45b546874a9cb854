"""`agent` and `memory` commands."""

from __future__ import annotations

import json

import click
from flask.cli import with_appcontext
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from models import Agent, DomainError, atomic, db
from models.agents.agent import DEFAULT_CORE_TOKEN_BUDGET
from models.changes import write
from models.memories.fields import CategoryName, Content, Ident, Importance, MemoryType, Role, Tags, UtcTime
from models.parsing import describe_problems

from .common import DomainErrorsAsMessages, emit, fail, resolve_agent

CLI_ACTOR = "admin:cli"


@click.group("agent", cls=DomainErrorsAsMessages)
def agent_cli() -> None:
    """Create agents and manage their API tokens."""


@agent_cli.command("create")
@click.argument("name")
@click.option(
    "--model", "model_id", default=None, help="Model id for the agent's own LLM (OpenAI-compatible)."
)
@click.option(
    "--budget", type=click.IntRange(100, 1_000_000), default=DEFAULT_CORE_TOKEN_BUDGET, show_default=True
)
@click.option("--role", default=None, help="Role for category allowlists (supervisor, planner, ...).")
@with_appcontext
def create_agent(name: str, model_id: str | None, budget: int, role: str | None) -> None:
    """Create an agent; prints its id and API token (shown once)."""
    name = name.strip()
    if not name or len(name) > 120:
        fail("agent name must be 1-120 characters")
    if db.session.scalar(db.select(Agent).where(Agent.name == name)) is not None:
        fail(f"an agent named {name!r} already exists")
    agent = Agent(name=name, model_id=model_id, core_token_budget=budget, role=role)
    token = agent.issue_token()
    db.session.add(agent)
    db.session.commit()
    emit(
        {
            "id": agent.id,
            "name": agent.name,
            "token": token,
            "model_id": model_id,
            "role": role,
            "core_token_budget": budget,
        }
    )


@agent_cli.command("rotate-token")
@click.argument("agent")
@with_appcontext
def rotate_token(agent: str) -> None:
    """Issue a new API token for AGENT; the old one stops working at once."""
    row = resolve_agent(agent)
    token = row.issue_token()
    db.session.commit()
    emit({"id": row.id, "name": row.name, "token": token})


@agent_cli.command("list")
@with_appcontext
def list_agents() -> None:
    """Agents with their token usage and when each was last refined (metadata only)."""
    agents = db.session.scalars(db.select(Agent).order_by(Agent.id)).all()
    emit(
        {
            "agents": [
                {
                    "id": a.id,
                    "name": a.name,
                    "role": a.role,
                    "model_id": a.model_id,
                    "core_tokens": a.core_token_usage,
                    "core_token_budget": a.core_token_budget,
                    "needs_refinement": a.needs_refinement,
                    "last_refinement_at": a.last_refinement_at,
                }
                for a in agents
            ]
        }
    )


class ImportLine(BaseModel):
    """One line of a memory import file: the memory fields' rules (models/memories/fields.py), as on the API."""

    model_config = ConfigDict(extra="forbid", strict=False)

    content: Content
    memory_type: MemoryType = "core"
    created_at: UtcTime | None = None
    tags: Tags = Field(default_factory=list)
    constitutional: bool = False
    category: CategoryName | None = None
    importance: Importance | None = None
    pinned: bool = False
    user_id: Ident | None = None
    thread_id: Ident | None = None
    run_id: Ident | None = None
    actor_id: Ident | None = None
    role: Role | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value  # stored stripped: measured stripped


@click.group("memory", cls=DomainErrorsAsMessages)
def memory_cli() -> None:
    """Import memories."""


@memory_cli.command("import")
@click.argument("agent")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@with_appcontext
def import_memories(agent: str, path: str) -> None:
    """Import PATH (JSON lines) into AGENT. Any bad line: every error is listed and nothing is imported."""
    row = resolve_agent(agent)
    parsed: list[tuple[int, ImportLine]] = []
    errors: list[str] = []
    with open(path, encoding="utf-8", errors="strict") as fh:
        try:
            lines = fh.read().splitlines()
        except UnicodeDecodeError:
            fail("the file is not valid UTF-8; nothing was imported")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as err:
            errors.append(f"line {number}: not valid JSON ({err.msg} at column {err.colno})")
            continue
        if not isinstance(value, dict):
            errors.append(f"line {number}: expected a JSON object")
            continue
        try:
            parsed.append((number, ImportLine.model_validate(value)))
        except ValidationError as err:
            errors.append(f"line {number}: {describe_problems(err, 'line')}")
    if errors:
        for message in errors:
            click.echo(message, err=True)
        fail(f"{len(errors)} bad line(s); nothing was imported")
    if not parsed:
        fail("the file holds no memories")
    with atomic():
        for number, line in parsed:
            fields = line.model_dump()
            try:
                write.save(row.id, fields.pop("content"), actor=CLI_ACTOR, action="import", **fields)
            except DomainError as err:  # exits inside atomic(): the whole import rolls back
                fail(f"line {number}: {err.message}; nothing was imported")
    emit({"agent_id": row.id, "imported": len(parsed), "core_tokens": row.core_token_usage})
