"""`admin`, `rollback` and `demo` commands."""

from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from models import DomainError, create_admin, db
from models.admins.user import set_admin_password, user_by_email
from models.changes.timemachine import (
    plan_agent_rollback,
    plan_operation_rollback,
    plan_session_rollback,
    rollback_agent,
    rollback_operation,
    rollback_session,
)

from .common import CommandWithMessages, DomainErrorsAsMessages, emit, fail, parse_when, resolve_agent

CLI_ACTOR = "admin:cli"


@click.group("admin", cls=DomainErrorsAsMessages)
def admin_cli() -> None:
    """Manage console admins."""


@admin_cli.command("create")
@click.argument("email")
@with_appcontext
def create_admin_command(email: str) -> None:
    """Create an admin. The password is prompted for, or read from the first line of stdin."""
    user = create_admin(email, _read_password())
    emit({"id": user.id, "email": user.email})


def _read_password() -> str:
    if sys.stdin.isatty():
        return click.prompt("Password", hide_input=True, confirmation_prompt=True)
    return sys.stdin.readline().rstrip("\r\n")


@admin_cli.command("set-password")
@click.argument("email")
@with_appcontext
def set_password_command(email: str) -> None:
    """Set an admin's password (hidden prompt, or the first line of stdin). Every session of that
    admin ends: the session token is rotated."""
    user = set_admin_password(email, _read_password())
    emit({"id": user.id, "email": user.email, "sessions_ended": True})


@admin_cli.command("totp")
@click.argument("email")
@click.option("--off", is_flag=True, help="Remove the second factor instead.")
@with_appcontext
def totp_command(email: str, off: bool) -> None:
    """Enrol EMAIL in TOTP (a new secret replaces any old one): prints a QR code for the authenticator
    app on stderr and the provisioning URI in the JSON on stdout. Sign-in then asks for the code."""
    import pyotp
    import segno

    user = user_by_email(email)
    if user is None:
        fail(f"no admin with email {email.strip().lower()}")
    if off:
        user.totp_secret = None
        user.totp_last_step = None
        db.session.commit()
        emit({"id": user.id, "email": user.email, "totp": False})
        return
    user.totp_secret = pyotp.random_base32()
    user.totp_last_step = None
    uri = pyotp.TOTP(user.totp_secret).provisioning_uri(name=user.email, issuer_name="Memory console")
    db.session.commit()
    # The QR code goes to stderr so stdout stays one JSON object; both show in a terminal.
    segno.make(uri, error="m").terminal(out=sys.stderr, compact=True)
    emit({"id": user.id, "email": user.email, "totp": True, "provisioning_uri": uri})


@click.group("rollback", cls=DomainErrorsAsMessages)
def rollback_cli() -> None:
    """The Time Machine: exact, audited, itself reversible."""


DRY_RUN = click.option(
    "--dry-run", is_flag=True, help="Only say what would change (counts and token deltas); change nothing."
)


def _plan_or_apply(dry_run: bool, plan, apply) -> None:
    """--dry-run: the plan's counts, exactly what the console's confirm step shows; else the rollback."""
    if dry_run:
        planned = plan()
        db.session.rollback()  # planning reads under the rollback's locks; release them, write nothing
        emit({"dry_run": True, "agent_id": planned.agent_id, **planned.scope, **planned.summary})
    else:
        emit(apply().to_dict())


@rollback_cli.command("session")
@click.argument("session_id", type=int)
@DRY_RUN
@with_appcontext
def rollback_session_command(session_id: int, dry_run: bool) -> None:
    """Undo every memory change refinement session SESSION_ID made."""
    _plan_or_apply(
        dry_run,
        lambda: plan_session_rollback(session_id),
        lambda: rollback_session(session_id, actor=CLI_ACTOR),
    )


@rollback_cli.command("agent")
@click.argument("agent")
@click.option("--to", "to", required=True, help="ISO 8601 time; without an offset it is UTC.")
@DRY_RUN
@with_appcontext
def rollback_agent_command(agent: str, to: str, dry_run: bool) -> None:
    """Restore every memory of AGENT exactly as it was at --to."""
    row = resolve_agent(agent)
    moment = parse_when(to)
    _plan_or_apply(
        dry_run,
        lambda: plan_agent_rollback(row.id, moment),
        lambda: rollback_agent(row.id, moment, actor=CLI_ACTOR),
    )


@rollback_cli.command("op")
@click.argument("op_id")
@DRY_RUN
@with_appcontext
def rollback_op_command(op_id: str, dry_run: bool) -> None:
    """Undo one operation (an op_id from the audit log), including a previous rollback."""
    _plan_or_apply(
        dry_run,
        lambda: plan_operation_rollback(op_id),
        lambda: rollback_operation(op_id, actor=CLI_ACTOR),
    )


@click.command("demo", cls=CommandWithMessages)
@click.option("--seed", default=7, show_default=True, help="Random seed: the same seed gives the same demo.")
@click.option(
    "--skip-if-present", is_flag=True, help="Exit quietly (status 0) when the demo is already seeded."
)
@with_appcontext
def demo_command(seed: int, skip_if_present: bool) -> None:
    """Seed a realistic demo: agents, hundreds of memories with duplicates, constitutional ones, history."""
    from .demo import demo_present, seed_demo

    if skip_if_present and demo_present():
        emit({"skipped": True, "reason": "demo data already present"})
        return
    try:
        emit(seed_demo(seed=seed))
    except ValueError as err:
        fail(str(err))
    except DomainError as err:
        fail(err.message)
