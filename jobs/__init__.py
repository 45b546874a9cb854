"""RQ job functions. Each is a module-level function taking ids and primitives; it loads its own rows.

Jobs run inside the app context that the worker process pushes once (`flask rq worker`).
"""
