"""The optional capture paths of docs/spec/003-memory-system.md §12-13, each behind its configuration flag: saving a workflow
as a procedural memory, and handing a long turn to the background multi-fact extraction."""

from __future__ import annotations

from flask import current_app
from redis.exceptions import RedisError

from infra.queues import get_rq
from jobs.extraction import MIN_TURN_CHARS, extract_parked_turn, save_procedure
from models import DomainError, FeatureDisabled

from .auth import category_config, current_agent
from .blueprint import api
from .convert import memory_out, memory_rev
from .schemas import ExtractionQueued, MemoryWritten, ProcedureCreate, TurnForExtraction


class QueueUnavailable(DomainError):
    code = "queue_unavailable"
    http_status = 503


@api.route(
    "/memory/procedure",
    "POST",
    summary="Save a workflow as numbered steps (procedural memory; PROCEDURAL_MEMORY=1)",
    tag="memory",
    body=ProcedureCreate,
    responses={201: MemoryWritten},
    errors=(403, 404),
)
def create_procedure(body: ProcedureCreate):
    """docs/spec/003-memory-system.md §12: an explicit trigger only. Stored as type and category `procedural`, so it stays out of the
    conversational prompt; roles whose allowlist has `procedural` fetch it with memory.query. A 404
    `feature_disabled` when the flag is off."""
    agent = current_agent()
    if not current_app.config.get("PROCEDURAL_MEMORY"):
        raise FeatureDisabled("procedural memory is disabled (set PROCEDURAL_MEMORY=1)")
    category_config().check(agent.role, ["procedural"])
    memory = save_procedure(
        agent.id, body.title, body.steps, **body.model_dump(include={"user_id", "run_id", "thread_id"})
    )
    return MemoryWritten(memory=memory_out(memory), rev=memory_rev(agent.id, memory)), 201


@api.route(
    "/memory/extract",
    "POST",
    summary="Queue a long turn for multi-fact extraction (MULTI_FACT_EXTRACTION=1)",
    tag="memory",
    body=TurnForExtraction,
    responses={202: ExtractionQueued},
    errors=(404, 503),
)
def queue_extraction(body: TurnForExtraction):
    """docs/spec/003-memory-system.md §13: the request only queues the turn (the hot path pays nothing for the model). A worker
    asks the agent's model for 1-5 durable facts and writes at most 3 per turn and 30 a day, skipping
    facts the agent already holds; without a model nothing is extracted. A 404 `feature_disabled` when
    the flag is off."""
    agent = current_agent()
    if not current_app.config.get("MULTI_FACT_EXTRACTION"):
        raise FeatureDisabled("multi-fact extraction is disabled (set MULTI_FACT_EXTRACTION=1)")
    rq = get_rq()
    try:
        # The turn waits in Redis under a key with a TTL; the job carries the key, so neither RQ's log
        # (which prints a job's description) nor the job's record holds the text.
        turn_key = rq.park(body.turn)
        job = rq.enqueue(
            extract_parked_turn,
            agent.id,
            turn_key,
            user_id=body.user_id,
            thread_id=body.thread_id,
            queue="llm",
        )
    except (RedisError, OSError) as error:
        raise QueueUnavailable("the job queue is unreachable; nothing was queued, try again later") from error
    return ExtractionQueued(job_id=job.id, min_turn_chars=MIN_TURN_CHARS), 202
