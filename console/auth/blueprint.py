"""The `auth` blueprint object, apart from its routes so route modules import it without a cycle."""

from flask import Blueprint

bp = Blueprint("auth", __name__)
