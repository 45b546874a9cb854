from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import flash, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_user, logout_user
from flask_wtf import FlaskForm
from sqlalchemy import select
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from models import User, db

from . import bp

log = logging.getLogger(__name__)


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=512)])


def _safe_next(target: str | None) -> str:
    """Only same-site relative redirects after sign-in."""
    if target and urlsplit(target).netloc == "" and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("agents.dashboard")


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("agents.dashboard"))
    form = LoginForm()
    if form.validate_on_submit():
        user = db.session.scalar(select(User).where(User.email == form.email.data.strip().lower()))
        if user is not None and user.active and user.is_admin and user.check_password(form.password.data):
            session.clear()  # a fresh session on sign-in: no fixation
            login_user(user)
            log.info("admin %s signed in", user.id)
            return redirect(_safe_next(request.args.get("next")))
        log.info("failed sign-in")
        flash("Wrong email or password.", "error")
    return render_template("auth/login.html", form=form), (401 if form.is_submitted() else 200)


@bp.post("/logout")
@login_required
def logout():
    logout_user()
    session.clear()
    flash("Signed out.", "info")
    return redirect(url_for("auth.login"))
