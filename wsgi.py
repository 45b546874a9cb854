"""WSGI entry point: `flask --app wsgi ...`, `gunicorn wsgi:app`."""

from console import create_app

app = create_app()
