"""Sign-in events: who signed in, who failed, who was locked out, and from which address.

No passwords and no codes are ever stored, and no email either: a failure for an email that matches
no admin is recorded with `user_id` NULL, so the table never holds the addresses strangers tried.
The console lists the latest ones (docs/explanation/security.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import DateTime, ForeignKey, Integer, String, func, select
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, db, utcnow

KINDS = ("signed_in", "failed", "code_failed", "locked_out", "signed_out", "expired")


class SignInEvent(Model):
    __tablename__ = "sign_in_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ts: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow, index=True)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    address: Mapped[str | None] = mapped_column(String(64))


def record(kind: str, user_id: int | None, address: str | None) -> None:
    """Add one event and commit it (a sign-in request has no other unit of work to join)."""
    if kind not in KINDS:
        raise ValueError(f"unknown sign-in event {kind!r}")
    db.session.add(SignInEvent(kind=kind, user_id=user_id, address=(address or "")[:64] or None))
    db.session.commit()


def record_lockout(user_id: int | None, address: str | None, quiet_seconds: int = 60) -> None:
    """A refused attempt while locked out: one event per address and admin a minute, not one per
    request, so hammering the form cannot flood the table."""
    since = utcnow() - timedelta(seconds=quiet_seconds)
    recent = db.session.scalar(
        select(func.count(SignInEvent.id)).where(
            SignInEvent.kind == "locked_out",
            SignInEvent.address == address,
            SignInEvent.user_id.is_(None) if user_id is None else SignInEvent.user_id == user_id,
            SignInEvent.ts >= since,
        )
    )
    if not recent:
        record("locked_out", user_id, address)


def recent(limit: int = 20) -> list[SignInEvent]:
    return list(db.session.scalars(select(SignInEvent).order_by(SignInEvent.id.desc()).limit(limit)))


def counts_since(since: datetime) -> dict[str, int]:
    rows = db.session.execute(
        select(SignInEvent.kind, func.count()).where(SignInEvent.ts >= since).group_by(SignInEvent.kind)
    )
    return {kind: count for kind, count in rows}
