"""The Flask app factory."""

from __future__ import annotations

import logging
import os

from flask import Flask

from infra import queues
from infra.config import Config
from models.db import configure_engine

from .extensions import csrf, db, login_manager, migrate

MIGRATIONS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")


def create_app(config: dict | None = None) -> Flask:
    """Build the app. `config` overrides the environment (tests pass a mapping). No connection is opened here."""
    app = Flask(__name__, instance_relative_config=True)
    os.makedirs(app.instance_path, exist_ok=True)
    app.config.from_mapping(Config(app.instance_path, config).as_dict())
    from .web.inputs import install_converters

    install_converters(app)  # bounded <int:...> ids: before any route is added

    db.init_app(app)
    migrate.init_app(app, db, directory=MIGRATIONS_DIR)
    login_manager.init_app(app)
    csrf.init_app(app)
    queues.init_app(app)
    with app.app_context():
        configure_engine(db.engine)  # SQLite pragmas, BEGIN IMMEDIATE for writes, the guard function
    _configure_logging(app)

    from models.admins.user import user_by_session_token

    @login_manager.user_loader
    def load_user(session_token: str):
        # The cookie carries the admin's current session token (Flask-Login's alternative id): a
        # token rotated by sign-out or a password change names nobody (docs/explanation/security.md).
        return user_by_session_token(session_token)

    from . import doors
    from .errors import register_error_handlers

    doors.init_app(app)  # before any other request hook reads the path or the body
    from .pages import register_console

    register_error_handlers(app)
    register_console(app)
    from .api import bp as api_bp

    csrf.exempt(api_bp)  # bearer-token API: no cookies, hence no CSRF
    app.register_blueprint(api_bp)

    from .cli import register_commands

    register_commands(app)
    from . import health, limits

    health.init_app(app)
    limits.init_app(app)  # last: it attaches to the sign-in views and the API blueprint
    return app


def _configure_logging(app: Flask) -> None:
    if not app.debug and not app.testing:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


# What to install when a command needs a module that is missing: the client's extras, the local embedder's
# extra, else the console's own dependencies (an environment the package was not installed into with pip).
INSTALL_HINTS = {
    "memconsole_client": ".venv/bin/pip install -e './client[langgraph,sqlite]'",
    "langgraph": ".venv/bin/pip install -e './client[langgraph,sqlite]'",
    "mcp": ".venv/bin/pip install -e './client[mcp]'",
    "sentence_transformers": ".venv/bin/pip install -e '.[local-embeddings]'",
    "torch": ".venv/bin/pip install -e '.[local-embeddings]'",
    "onnxruntime": ".venv/bin/pip install -e '.[local-embeddings]'",
    "onnx": ".venv/bin/pip install -e '.[local-embeddings]'",
}


def missing_module_message(error: ModuleNotFoundError) -> str:
    """One line naming the missing module and the command that installs it."""
    top = (error.name or "").split(".")[0]
    hint = INSTALL_HINTS.get(top, ".venv/bin/pip install -e .")
    return f"memconsole: this command needs the Python module {top!r}, which is not installed here: {hint}"


def main() -> None:
    """The `memconsole` console script: the same commands as `flask --app wsgi`. A command that needs a module
    that is not installed ends with one line saying what to install, not a traceback."""
    from flask.cli import FlaskGroup

    try:
        FlaskGroup(create_app=create_app)()
    except ModuleNotFoundError as error:
        raise SystemExit(missing_module_message(error)) from None
