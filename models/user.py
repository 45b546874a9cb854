"""Site admins: the humans who govern agents' memory without reading it."""

from __future__ import annotations

from datetime import datetime

from flask_login import UserMixin
from sqlalchemy import Boolean, DateTime, Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column
from werkzeug.security import check_password_hash, generate_password_hash

from .db import db, utcnow
from .errors import ValidationFailed

MIN_PASSWORD_LENGTH = 10


class User(UserMixin, db.Model):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True, nullable=False)
    password_hash: Mapped[str] = mapped_column(String(255), nullable=False)
    is_admin: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)

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

    def check_password(self, password: str) -> bool:
        return check_password_hash(self.password_hash, password or "")


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
