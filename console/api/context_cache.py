"""What GET /api/v1/context keeps between requests, in this process, per agent and format:

- the block's digest (models/retrieval/context.py `Digest`), under the agent's `block_version` — a new random
  value whenever a memory changes what the block shows, set by the database's triggers (migration 0024) —
  and the categories and window it was computed for, until its oldest journal leaves the window. A
  conditional request then costs the agent's row, which its token already read, and no memory at all.
- the block as last rendered, under its ETag: an unchanged block is answered from it instead of reading
  and rendering every memory again; and what it wrote of each memory, by the memory's signature
  (models/retrieval/context.py `fragments`): a changed block reads and writes only the memories that
  changed, and joins the others' as they were.

One entry of each per (agent, format): a new one replaces the agent's previous one, so a changed block's
old text does not linger (a rendering keeps the fragments of its own memories only); the least recently
used renderings go first past CONTEXT_CACHE_MB (0: no rendering is kept; digests, a few dozen bytes each,
are kept up to MAX_DIGESTS). It holds what the agent's
own responses hold, in the web process only — never in Redis or on disk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from datetime import datetime
from typing import NamedTuple

from models.retrieval.context import Digest

MAX_DIGESTS = 50_000

_lock = threading.Lock()


class Rendering(NamedTuple):
    etag: str
    body: bytes
    fragments: dict[int, str]  # by signature
    size: int  # bytes counted against CONTEXT_CACHE_MB


_blocks: OrderedDict[tuple[int, str], Rendering] = OrderedDict()
_size = 0
_digests: OrderedDict[tuple[int, str], tuple[Hashable, Digest]] = OrderedDict()


def digest(agent_id: int, fmt: str, key: Hashable, now: datetime) -> Digest | None:
    """The digest kept for exactly `key` (the agent's block version, its categories, the window), if its
    oldest journal is still in the window at `now`."""
    with _lock:
        kept = _digests.get((agent_id, fmt))
        if kept is None or kept[0] != key:
            return None
        if kept[1].leaves_at is not None and now > kept[1].leaves_at:
            return None
        _digests.move_to_end((agent_id, fmt))
        return kept[1]


def keep_digest(agent_id: int, fmt: str, key: Hashable, value: Digest) -> None:
    with _lock:
        _digests.pop((agent_id, fmt), None)
        _digests[(agent_id, fmt)] = (key, value)
        while len(_digests) > MAX_DIGESTS:
            _digests.popitem(last=False)


def get(agent_id: int, fmt: str, etag: str) -> bytes | None:
    """The body rendered for exactly this ETag, if it is the one kept."""
    with _lock:
        kept = _blocks.get((agent_id, fmt))
        if kept is None or kept.etag != etag:
            return None
        _blocks.move_to_end((agent_id, fmt))
        return kept.body


def fragments(agent_id: int, fmt: str) -> dict[int, str]:
    """What the last rendering kept wrote of each of its memories, by signature (empty if none is kept)."""
    with _lock:
        kept = _blocks.get((agent_id, fmt))
        return kept.fragments if kept is not None else {}


def put(agent_id: int, fmt: str, etag: str, body: bytes, frags: dict[int, str], limit_bytes: int) -> None:
    global _size
    # The body and its memories' fragments, which are most of the body: twice its length, without a pass
    # over a thousand fragments on every read that renders.
    size = 2 * len(body)
    if size > limit_bytes:
        return
    with _lock:
        old = _blocks.pop((agent_id, fmt), None)
        if old is not None:
            _size -= old.size
        _blocks[(agent_id, fmt)] = Rendering(etag, body, frags, size)
        _size += size
        while _size > limit_bytes and _blocks:
            _, dropped = _blocks.popitem(last=False)
            _size -= dropped.size


def clear() -> None:
    global _size
    with _lock:
        _blocks.clear()
        _digests.clear()
        _size = 0
