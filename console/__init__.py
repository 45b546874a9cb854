"""The Flask app factory."""

from __future__ import annotations

import logging
import os

from flask import Flask, jsonify

from models.db import configure_engine

from . import queues
from .config import Config
from .extensions import csrf, db, login_manager, migrate

MIGRATIONS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")


def create_app(config: dict | None = None) -> Flask:
    """Build the app. `config` overrides the environment (tests pass a mapping). No connection is opened here."""
    app = Flask(__name__, instance_relative_config=True)
    os.makedirs(app.instance_path, exist_ok=True)
    app.config.from_mapping(Config(app.instance_path, config).as_dict())

    db.init_app(app)
    migrate.init_app(app, db, directory=MIGRATIONS_DIR)
    login_manager.init_app(app)
    csrf.init_app(app)
    queues.init_app(app)
    with app.app_context():
        configure_engine(db.engine)  # SQLite pragmas, BEGIN IMMEDIATE for writes, the guard function
    _configure_logging(app)

    from models import User

    @login_manager.user_loader
    def load_user(user_id: str):
        return db.session.get(User, int(user_id)) if user_id.isdigit() else None

    from .errors import register_error_handlers
    from .web import register_console

    register_error_handlers(app)
    register_console(app)
    from .api import bp as api_bp

    csrf.exempt(api_bp)  # bearer-token API: no cookies, hence no CSRF
    app.register_blueprint(api_bp)

    from .cli import register_commands

    register_commands(app)

    @app.get("/healthz")
    def healthz():
        return jsonify(status="ok")

    return app


def _configure_logging(app: Flask) -> None:
    if not app.debug and not app.testing:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
