"""Extensions, created unbound and bound to an app in create_app()."""

from flask_login import LoginManager
from flask_migrate import Migrate
from flask_wtf import CSRFProtect

from models.db import db

migrate = Migrate()
login_manager = LoginManager()
csrf = CSRFProtect()

__all__ = ["csrf", "db", "login_manager", "migrate"]
