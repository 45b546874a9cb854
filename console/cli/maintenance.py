"""`admin`, `rollback` and `demo` commands."""

from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from models import DomainError, create_admin
from models.timemachine import rollback_agent, rollback_operation, rollback_session

from . import DomainErrorsAsMessages, emit, fail, parse_when, resolve_agent

CLI_ACTOR = "admin:cli"


@click.group("admin", cls=DomainErrorsAsMessages)
def admin_cli() -> None:
    """Manage console admins."""


@admin_cli.command("create")
@click.argument("email")
@with_appcontext
def create_admin_command(email: str) -> None:
    """Create an admin. The password is prompted for, or read from the first line of stdin."""
    if sys.stdin.isatty():
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    user = create_admin(email, password)
    emit({"id": user.id, "email": user.email})


@click.group("rollback", cls=DomainErrorsAsMessages)
def rollback_cli() -> None:
    """The Time Machine: exact, audited, itself reversible."""


@rollback_cli.command("session")
@click.argument("session_id", type=int)
@with_appcontext
def rollback_session_command(session_id: int) -> None:
    """Undo every memory change refinement session SESSION_ID made."""
    emit(rollback_session(session_id, actor=CLI_ACTOR).to_dict())


@rollback_cli.command("agent")
@click.argument("agent")
@click.option("--to", "to", required=True, help="ISO 8601 time; without an offset it is UTC.")
@with_appcontext
def rollback_agent_command(agent: str, to: str) -> None:
    """Restore every memory of AGENT exactly as it was at --to."""
    row = resolve_agent(agent)
    emit(rollback_agent(row.id, parse_when(to), actor=CLI_ACTOR).to_dict())


@rollback_cli.command("op")
@click.argument("op_id")
@with_appcontext
def rollback_op_command(op_id: str) -> None:
    """Undo one operation (an op_id from the audit log), including a previous rollback."""
    emit(rollback_operation(op_id, actor=CLI_ACTOR).to_dict())


@click.command("demo")
@click.option("--seed", default=7, show_default=True, help="Random seed: the same seed gives the same demo.")
@click.option("--skip-if-present", is_flag=True, help="Exit quietly (status 0) when the demo is already seeded.")
@with_appcontext
def demo_command(seed: int, skip_if_present: bool) -> None:
    """Seed a realistic demo: agents, hundreds of memories with duplicates, constitutional ones, history."""
    from console.demo import demo_present, seed_demo

    if skip_if_present and demo_present():
        emit({"skipped": True, "reason": "demo data already present"})
        return
    try:
        emit(seed_demo(seed=seed))
    except ValueError as err:
        fail(str(err))
    except DomainError as err:
        fail(err.message)
