"""The Mechanic's Exception, admin side: ask for access, watch for consent, read within scope until it lapses."""

from . import routes  # registers the routes on the blueprint
from .blueprint import bp

__all__ = ["bp"]
