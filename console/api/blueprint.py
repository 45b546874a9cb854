"""The `api` blueprint object, apart from its routes so route modules import it without a cycle."""

from flask import Blueprint

from .spec import Api

bp = Blueprint("api", __name__, url_prefix="/api/v1")
api = Api(bp, title="Memory console agent API", version="1.0.0")
