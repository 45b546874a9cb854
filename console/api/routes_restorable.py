"""What an agent can still restore (docs/spec/003-memory-system.md §7): GET /memories/restorable lists its
soft-deleted memories and the TTL-expired ones before their purge date; POST /memory/<id>/restore
(console/api/routes_memory.py) brings one back through the one write path."""

from __future__ import annotations

from models.retrieval.restorable import restorable

from .auth import category_config, current_agent
from .blueprint import api
from .schemas import RestorableArgs, RestorableMemory, RestorableOut


@api.route(
    "/memories/restorable",
    "GET",
    summary="List your memories that can still be restored, with their purge dates",
    tag="memory",
    args=RestorableArgs,
    responses={200: RestorableOut},
)
def list_restorable(args: RestorableArgs):
    """Your soft-deleted memories (deleted by you, a refinement session, a job or an admin: never purged) and
    the TTL-expired ones until their purge date, the most recently deleted first, within your category
    allowlist, `limit` a page (`cursor`: the previous page's `next_cursor`). Each is restorable with
    `POST /memory/<id>/restore` (one tagged audio, somatic or voice that an admin deleted is refused there,
    409 `immutable`)."""
    agent = current_agent()
    found, next_cursor = restorable(
        agent.id, category_config().readable_for(agent.role), limit=args.limit, cursor=args.cursor
    )
    return RestorableOut(
        memories=[
            RestorableMemory(
                id=m.id,
                memory_type=m.memory_type,
                category=m.category,
                state="expired" if m.purge_at is not None else "deleted",
                deleted_at=m.deleted_at,
                purge_at=m.purge_at,
                content=m.content,
                token_estimate=m.token_estimate,
            )
            for m in found
        ],
        next_cursor=next_cursor,
    )
