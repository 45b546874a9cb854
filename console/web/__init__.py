"""The admin console's shared web layer: blueprint registration, the fragment-or-page helper,
admin-only access, security headers and template filters.

Each area is its own blueprint (`console/<area>/`): auth, agents, memories, timeline, mechanic,
workers. Views stay thin: parse, call `models/`, render. What the console shows a human is
metadata; memory text appears only inside a live Mechanic's grant (DESIGN.md, invariant 6).
"""

from __future__ import annotations

from flask import Flask

from . import filters, security


def register_console(app: Flask) -> None:
    """Register every console blueprint and the shared hooks on the app."""
    from console.agents import bp as agents_bp
    from console.auth import bp as auth_bp
    from console.mechanic import bp as mechanic_bp
    from console.memories import bp as memories_bp
    from console.timeline import bp as timeline_bp
    from console.workers import bp as workers_bp

    security.init_app(app)
    filters.init_app(app)
    for blueprint in (auth_bp, agents_bp, memories_bp, timeline_bp, mechanic_bp, workers_bp):
        app.register_blueprint(blueprint)
