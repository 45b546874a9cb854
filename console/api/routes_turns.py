"""Turn accounting for on-demand recall (docs/spec/003-memory-system.md §11): the agent notes each turn,
recalled or not, so the share of turns that recalled is readable (GET /agent's `recall`, the console's
agent page). A separate call, so memory.query's meaning stays what it is."""

from __future__ import annotations

from models.history import events

from .auth import current_agent
from .blueprint import api
from .schemas import TurnIn, TurnNoted


@api.route(
    "/turns",
    "POST",
    summary="Note one of your turns: recalled or not",
    tag="agent",
    body=TurnIn,
    responses={202: TurnNoted},
)
def note_turn(body: TurnIn):
    """Records a content-free `recall_turn` event (status `recalled` or `skipped`); the client's recall
    helper sends it on every turn. Counted in GET /agent's `recall` within seconds."""
    events.note(
        current_agent().id,
        events.RECALL_TURN,
        events.RECALLED if body.recalled else events.SKIPPED,
        user_id=body.user_id,
        thread_id=body.thread_id,
    )
    return TurnNoted(recalled=body.recalled, noted=True), 202
