"""The context block as last rendered, per agent and format, in this process: GET /api/v1/context answers
an unchanged block from it once the ETag (an aggregate of one row, models/retrieval/context.py `digest`)
says it is current, instead of reading and rendering every memory again.

One entry per (agent, format): a new rendering replaces the agent's previous one, so a changed block's
old text does not linger; the least recently used go first past CONTEXT_CACHE_MB (0: no cache). It holds
what the agent's own responses hold, in the web process only — never in Redis or on disk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

_lock = threading.Lock()
_blocks: OrderedDict[tuple[int, str], tuple[str, bytes]] = OrderedDict()
_size = 0


def get(agent_id: int, fmt: str, etag: str) -> bytes | None:
    """The body rendered for exactly this ETag, if it is the one kept."""
    with _lock:
        kept = _blocks.get((agent_id, fmt))
        if kept is None or kept[0] != etag:
            return None
        _blocks.move_to_end((agent_id, fmt))
        return kept[1]


def put(agent_id: int, fmt: str, etag: str, body: bytes, limit_bytes: int) -> None:
    global _size
    if len(body) > limit_bytes:
        return
    with _lock:
        old = _blocks.pop((agent_id, fmt), None)
        if old is not None:
            _size -= len(old[1])
        _blocks[(agent_id, fmt)] = (etag, body)
        _size += len(body)
        while _size > limit_bytes and _blocks:
            _, (_, dropped) = _blocks.popitem(last=False)
            _size -= len(dropped)


def clear() -> None:
    global _size
    with _lock:
        _blocks.clear()
        _size = 0
