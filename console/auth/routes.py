"""Sign in (password, then a TOTP code when the admin enrolled one), sign out, and the sign-in log.

What guards these doors (docs/explanation/security.md): failed attempts are rate-limited per address and per
email (console/limits.py); an unknown email costs the same password-hash work as a known one; the
session cookie names a server-side token that sign-out rotates; sessions end after
PERMANENT_SESSION_LIFETIME or SESSION_IDLE_MINUTES idle (console/web/security.py).
"""

from __future__ import annotations

import hmac
import logging
import re
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pyotp
from flask import flash, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_user, logout_user
from flask_wtf import FlaskForm
from sqlalchemy import or_, update
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, Length, Regexp

from console.web.security import require_admin
from models import User, db, utcnow
from models.admins import sign_ins
from models.admins.user import refuse_unknown_password, user_by_email

from .blueprint import bp

log = logging.getLogger(__name__)
CODE_STEP_SECONDS = 300  # how long the code step waits after the right password


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=512)])


class CodeForm(FlaskForm):
    code = StringField("Code", validators=[DataRequired(), Regexp(r"^\s*\d{6}\s*$", message="six digits")])


# A same-site path in printable ASCII: no control character (a CR/LF would split the Location header),
# no space, no backslash (browsers read one as a slash: "/\host" is "//host"), nothing a header cannot carry.
_SAFE_PATH = re.compile(r"^/(?![/\\])[!-\[\]-~]*\Z")


def _safe_next(target: str | None) -> str:
    """Only same-site relative redirects after sign-in; any other `next=` goes to the dashboard."""
    if target and _SAFE_PATH.match(target):
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("agents.dashboard")


def _address() -> str | None:
    return request.remote_addr


def _sign_in(user: User, target: str):
    if not user.session_token:
        user.rotate_session_token()
        db.session.commit()
    session.clear()  # a fresh session on sign-in: no fixation
    session.permanent = True  # the cookie expires with PERMANENT_SESSION_LIFETIME
    login_user(user)
    now = time.time()
    session["signed_in_at"] = now
    session["seen_at"] = now
    sign_ins.record("signed_in", user.id, _address())
    log.info("admin %s signed in", user.id)
    return redirect(target)


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("agents.dashboard"))
    form = LoginForm()
    if form.validate_on_submit():
        user = user_by_email(form.email.data)
        password = form.password.data
        # The same hash work whether or not the email is an admin's: no account oracle in the timing.
        right = user.check_password(password) if user is not None else refuse_unknown_password(password)
        if right and user.active and user.is_admin:
            target = _safe_next(request.args.get("next"))
            if user.totp_secret:
                session.clear()
                session["pending_2fa"] = {
                    "user": user.id,
                    "email": user.email,
                    "at": time.time(),
                    "next": target,
                }
                return redirect(url_for("auth.login_code"))
            return _sign_in(user, target)
        sign_ins.record("failed", user.id if user is not None else None, _address())
        log.info("failed sign-in")
        flash("Wrong email or password.", "error")
    return render_template("auth/login.html", form=form), (401 if form.is_submitted() else 200)


def _pending_user() -> User | None:
    pending = session.get("pending_2fa")
    if not isinstance(pending, dict) or time.time() - float(pending.get("at") or 0) > CODE_STEP_SECONDS:
        return None
    user = db.session.get(User, int(pending.get("user") or 0))
    if user is None or not user.totp_secret or not user.active or not user.is_admin:
        return None
    return user


def _accept_code(user: User, code: str) -> bool:
    """A current code (one step of clock drift either way), each code once."""
    totp = pyotp.TOTP(user.totp_secret)
    now = totp.timecode(datetime.now(UTC))
    for step in (now - 1, now, now + 1):
        if hmac.compare_digest(totp.generate_otp(step), code):
            # One conditional UPDATE: two requests racing with the same code cannot both win.
            used = db.session.execute(
                update(User)
                .where(User.id == user.id, or_(User.totp_last_step.is_(None), User.totp_last_step < step))
                .values(totp_last_step=step)
            ).rowcount
            db.session.commit()
            return used == 1
    return False


@bp.route("/login/code", methods=["GET", "POST"])
def login_code():
    """The second step for admins enrolled with `admin totp EMAIL`."""
    user = _pending_user()
    if user is None:
        session.pop("pending_2fa", None)
        if request.method == "POST":
            flash("The sign-in step expired; enter your email and password again.", "error")
        return redirect(url_for("auth.login"))
    form = CodeForm()
    if form.validate_on_submit() and _accept_code(user, form.code.data.strip()):
        return _sign_in(user, session["pending_2fa"].get("next") or url_for("agents.dashboard"))
    if form.is_submitted():
        sign_ins.record("code_failed", user.id, _address())
        flash("That code is not right (or was already used); try the current one.", "error")
    return render_template("auth/code.html", form=form), (401 if form.is_submitted() else 200)


def locked_out(err, wait: int):
    """429 on the sign-in steps: a plain message, no form to retry with until the window passes (`wait`:
    its seconds, console.limits.retry_after)."""
    user = (
        _pending_user()
        if request.endpoint == "auth.login_code"
        else user_by_email(request.form.get("email", ""))
    )
    sign_ins.record_lockout(user.id if user is not None else None, _address())
    log.info("sign-in locked out")
    return render_template("auth/locked.html", minutes=max(1, round(wait / 60))), 429


@bp.post("/logout")
@login_required
def logout():
    """Sign out everywhere: the admin's session token changes, so every saved cookie stops working."""
    user = current_user._get_current_object()
    user.rotate_session_token()
    db.session.commit()
    sign_ins.record("signed_out", user.id, _address())
    logout_user()
    session.clear()
    flash("Signed out.", "info")
    return redirect(url_for("auth.login"))


@bp.get("/sign-ins")
def sign_in_log():
    """The latest sign-in events and the last day's counts (admins only)."""
    refused = require_admin()
    if refused is not None:
        return refused
    events = sign_ins.recent(50)
    emails = {
        user.id: user.email
        for user in db.session.scalars(
            db.select(User).where(User.id.in_({e.user_id for e in events if e.user_id}))
        )
    }
    counts = sign_ins.counts_since(utcnow() - timedelta(days=1))
    return render_template("auth/sign_ins.html", events=events, emails=emails, counts=counts)
