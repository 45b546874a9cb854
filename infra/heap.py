"""The collector and a process's long-lived objects.

Python's cyclic garbage collector visits every tracked object of its oldest generation on each full
collection. A web process that has loaded the local embedding model holds millions of them (PyTorch,
transformers, ONNX Runtime), all alive until the process ends, and a full collection then took about
300 ms — in whichever request happened to allocate past the threshold: the p95 of a 5,000-memory context
block was 350 ms against a p50 of 38 (docs/benchmarks.md, "The context block"). `settle` moves every object
alive now to the collector's permanent generation (`gc.freeze`), which collections skip, so they cost what
the request's own objects cost. Called once a process's long-lived parts are loaded: the app built
(before gunicorn forks its workers, which also keeps their shared pages from being copied when a
collection would have touched them) and the local embedding model loaded.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect what is already garbage, then leave everything still alive out of every later collection."""
    gc.collect()
    gc.freeze()
