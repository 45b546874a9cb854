"""The `demo` command's data set: `data.py` (agents, word pools, templates), `plan.py` (the memories
one seed draws from them) and `seed.py` (writing them, and the history after, through the real code
paths). docs/reference/cli.md says what `flask --app wsgi demo` gives you."""

from .seed import demo_present, seed_demo

__all__ = ["demo_present", "seed_demo"]
