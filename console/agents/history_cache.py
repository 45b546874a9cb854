"""Core-token histories for sparklines, cached in Redis by audit version.

Building a history reads every audit record of an agent (the token figures live in the JSON
snapshots), too slow to repeat for fifty agents on every dashboard render with a million memories.
The audit log is append-only, so an agent's history can only change by gaining records: the cache
key carries the agent's (record count, newest record time), read from the (agent_id, created_at)
index in one grouped query, and a stale entry is simply never read again. Only agents whose history
changed are rebuilt. Redis unreachable: built directly, slower but the same answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from redis.exceptions import RedisError

from infra.queues import get_rq
from models.parsing import parse_utc
from models.readmodels.token_history import TokenHistory, audit_versions, token_histories

log = logging.getLogger(__name__)
PREFIX = "memconsole:token-history:v1"
TTL_SECONDS = 14 * 24 * 3600


def _key(agent_id: int, version: tuple[int, str]) -> str:
    return f"{PREFIX}:{agent_id}:{version[0]}:{version[1]}"


def _dump(history: TokenHistory) -> str:
    return json.dumps(
        {"total": history.total, "points": [[at.isoformat(), value] for at, value in history.points]}
    )


def _load(blob: bytes) -> TokenHistory:
    data = json.loads(blob)
    return TokenHistory(points=[(parse_utc(at), value) for at, value in data["points"]], total=data["total"])


def cached_histories(agent_ids: Sequence[int], *, build: bool = True) -> dict[int, TokenHistory]:
    """Histories for these agents: from the cache where the version matches, rebuilt where not.

    With `build=False` only cached ones come back (a page can render at once and fetch the rest).
    """
    if not agent_ids:
        return {}
    versions = audit_versions(agent_ids)
    keys = {agent_id: _key(agent_id, versions[agent_id]) for agent_id in agent_ids}
    try:
        connection = get_rq().connection
        blobs = connection.mget([keys[a] for a in agent_ids])
    except (RedisError, OSError) as err:
        log.warning("token-history cache unreachable (%s)", type(err).__name__)
        return token_histories(agent_ids) if build else {}
    found = {a: _load(b) for a, b in zip(agent_ids, blobs, strict=True) if b is not None}
    missing = [a for a in agent_ids if a not in found]
    if missing and build:
        built = token_histories(missing)
        found.update(built)
        try:
            with connection.pipeline(transaction=False) as pipe:
                for agent_id, history in built.items():
                    pipe.set(keys[agent_id], _dump(history), ex=TTL_SECONDS)
                pipe.execute()
        except (RedisError, OSError) as err:
            log.warning("token-history cache not written (%s)", type(err).__name__)
    return found
