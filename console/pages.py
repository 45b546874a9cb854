"""The admin console's pages: every area is its own blueprint (`console/<area>/`): auth, agents,
memories, timeline, mechanic, workers. Views stay thin: parse, call `models/`, render. What the console
shows a human is metadata; memory text appears only inside a live Mechanic's grant
(docs/explanation/architecture.md, "Privacy: who may read memory text").
"""

from __future__ import annotations

from flask import Flask, request

from models.db import REPLICA, db, read_from_replica

from .agents import bp as agents_bp
from .auth import bp as auth_bp
from .mechanic import bp as mechanic_bp
from .memories import bp as memories_bp
from .timeline import bp as timeline_bp
from .web import filters, inputs, security
from .workers import bp as workers_bp


def register_console(app: Flask) -> None:
    """Register every console blueprint and the shared hooks on the app."""
    security.init_app(app)
    inputs.init_app(app)
    filters.init_app(app)
    for blueprint in (auth_bp, agents_bp, memories_bp, timeline_bp, mechanic_bp, workers_bp):
        app.register_blueprint(blueprint)
    pages = {bp.name for bp in (agents_bp, memories_bp, timeline_bp, mechanic_bp, workers_bp)}

    @app.before_request
    def _pages_read_from_the_replica():
        # Console pages answering GET read from DATABASE_REPLICA_URL when set (models/db.py, "read replica").
        if request.method == "GET" and request.blueprint in pages:
            read_from_replica()

    @app.teardown_request
    def _reads_return_to_the_primary(_error):
        # The opt-in lasts one request, even where requests share a session (an outer app context).
        db.session.info.pop(REPLICA, None)
