"""Site admins: the humans who govern agents' memory without reading it.

Sign-in state lives on the server (docs/explanation/security.md): the session cookie carries `session_token`
(Flask-Login's alternative id), not the user id, and the token is replaced at sign-out and on a
password change, so a cookie saved before then opens nothing.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from functools import cache

from flask_login import UserMixin
from sqlalchemy import Boolean, DateTime, Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column
from werkzeug.security import check_password_hash, generate_password_hash

from models.db import Model, db, utcnow
from models.errors import NotFound, ValidationFailed

MIN_PASSWORD_LENGTH = 10


class User(UserMixin, Model):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True, nullable=False)
    password_hash: Mapped[str] = mapped_column(String(255), nullable=False)
    is_admin: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    session_token: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    totp_secret: Mapped[str | None] = mapped_column(String(64))
    totp_last_step: Mapped[int | None] = mapped_column(Integer)
    password_changed_at: Mapped[datetime | None] = mapped_column(DateTime)

    def get_id(self) -> str:  # Flask-Login: what the session cookie carries (set before sign-in)
        return self.session_token or ""

    def rotate_session_token(self) -> None:
        """Every session signed in with the old token ends (the caller commits)."""
        self.session_token = secrets.token_urlsafe(32)

    @property
    def is_active(self) -> bool:  # Flask-Login
        return self.active

    @property
    def actor(self) -> str:
        return f"admin:{self.id}"

    def set_password(self, password: str) -> None:
        if len(password or "") < MIN_PASSWORD_LENGTH:
            raise ValidationFailed(f"password must be at least {MIN_PASSWORD_LENGTH} characters")
        self.password_hash = generate_password_hash(password)
        self.password_changed_at = utcnow()
        self.rotate_session_token()

    def check_password(self, password: str) -> bool:
        return check_password_hash(self.password_hash, password or "")


@cache
def _dummy_hash() -> str:
    # Made with the same method and cost as real hashes, so checking it costs the same.
    return generate_password_hash(secrets.token_urlsafe(16))


def refuse_unknown_password(password: str) -> bool:
    """Spend the work of one password check and fail: an unknown email must take as long to refuse
    as a known one, or the timing tells which emails are admins."""
    check_password_hash(_dummy_hash(), password or "")
    return False


def user_by_session_token(token: str) -> User | None:
    """The admin a session cookie names, if its token is still current."""
    if not token or len(token) > 64:
        return None
    return db.session.scalar(select(User).where(User.session_token == token))


def user_by_email(email: str) -> User | None:
    return db.session.scalar(select(User).where(User.email == (email or "").strip().lower()))


def set_admin_password(email: str, password: str) -> User:
    """A new password; every session of that admin ends."""
    user = user_by_email(email)
    if user is None:
        raise NotFound(f"no admin with email {email.strip().lower()}")
    user.set_password(password)
    db.session.commit()
    return user


def create_admin(email: str, password: str) -> User:
    """Create an admin account; the email is normalised and must be unique."""
    email = (email or "").strip().lower()
    if "@" not in email or len(email) > 254:
        raise ValidationFailed("a valid email address is required")
    if db.session.scalar(select(User).where(User.email == email)) is not None:
        raise ValidationFailed(f"an admin with email {email} already exists")
    user = User(email=email)
    user.set_password(password)
    db.session.add(user)
    db.session.commit()
    return user
