"""WSGI entry point: `flask --app wsgi ...`, `gunicorn wsgi:app`."""

from console import create_app
from infra.heap import settle

app = create_app()
settle()  # the app's objects live as long as the process: no collection visits them (infra/heap.py)
