from __future__ import annotations

from urllib.parse import urlsplit

from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user
from flask_wtf import FlaskForm
from sqlalchemy import func, select
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from console.extensions import login_manager
from models import Agent, AgentMemory, User, db

from . import bp

login_manager.login_view = "web.login"
login_manager.login_message = "Please sign in."


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=512)])


def _safe_next(target: str | None) -> str:
    """Only same-site relative redirects after login."""
    if target and urlsplit(target).netloc == "" and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("web.dashboard")


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("web.dashboard"))
    form = LoginForm()
    if form.validate_on_submit():
        user = db.session.scalar(select(User).where(User.email == form.email.data.strip().lower()))
        if user is not None and user.active and user.check_password(form.password.data):
            login_user(user)
            return redirect(_safe_next(request.args.get("next")))
        flash("Wrong email or password.", "error")
    return render_template("web/login.html", form=form), (401 if form.is_submitted() else 200)


@bp.post("/logout")
@login_required
def logout():
    logout_user()
    return redirect(url_for("web.login"))


@bp.get("/")
@login_required
def dashboard():
    """Every agent with core token usage against its budget, in one aggregate query."""
    core = (
        select(
            AgentMemory.agent_id,
            func.coalesce(func.sum(AgentMemory.token_estimate), 0).label("tokens"),
            func.count().label("count"),
            func.sum(AgentMemory.constitutional.cast(db.Integer)).label("constitutional"),
        )
        .where(AgentMemory.memory_type == "core", AgentMemory.deleted_at.is_(None))
        .group_by(AgentMemory.agent_id)
        .subquery()
    )
    rows = db.session.execute(
        select(Agent, core.c.tokens, core.c.count, core.c.constitutional)
        .outerjoin(core, core.c.agent_id == Agent.id)
        .order_by(Agent.name)
    ).all()
    agents = [
        {
            "agent": agent,
            "tokens": tokens or 0,
            "count": count or 0,
            "constitutional": constitutional or 0,
            "percent": min(100, round(100 * (tokens or 0) / max(agent.core_token_budget, 1))),
            "over": (tokens or 0) > agent.core_token_budget,
        }
        for agent, tokens, count, constitutional in rows
    ]
    return render_template("web/dashboard.html", agents=agents)
