"""memory.query (docs/spec/003-memory-system.md §6): the one retrieval call, with the delta header of docs/spec/003-memory-system.md §1."""

from __future__ import annotations

import logging

from flask import current_app

from jobs.embeddings import query_vector, rest_vector
from models import DomainError, estimate_tokens
from models.db import end_read, read_from_replica
from models.history import changelog, events
from models.memories.categories import UNCATEGORIZED, from_wire
from models.retrieval import access, query, relations
from models.retrieval.filters import filter_clauses

from .auth import category_config, current_agent
from .blueprint import api
from .schemas import Bullet, DeltaOut, FullResult, MemoryQuery, QueryOut, RelatedBullet

log = logging.getLogger(__name__)


def _dense(text: str | None):
    """The query's vector for the hybrid ranking, or None: no real embedder configured
    (docs/explanation/retrieval.md), or the embedder failed — the answer is then the lexical ranking, never an
    error."""
    try:
        return query_vector(text or "")
    except Exception as error:  # an endpoint down or slow, a broken local install: degrade, don't fail
        log.warning("memory.query: query embedding failed (%s); ranking lexically", type(error).__name__)
        return None


class AgentScopeForbidden(DomainError):
    code = "agent_scope"
    http_status = 403


@api.route(
    "/memory/query",
    "POST",
    summary="memory.query: ranked retrieval within your allowlist",
    tag="memory",
    body=MemoryQuery,
    responses={200: QueryOut},
    errors=(403,),
)
def memory_query(body: MemoryQuery):
    """Lexical relevance (full-text search), fused with vector similarity when a real embedder is configured,
    combined with recency and importance, every filter applied in SQL. The answer, delta header included, never exceeds `budget_tokens` (estimated as ceil(chars / 4))."""
    agent = current_agent()  # authenticated on the primary, before any read may go to the replica
    read_from_replica()  # DATABASE_REPLICA_URL, when set: plain reads only (models/db.py, "read replica")
    filters = body.filters.model_dump(exclude_none=True) if body.filters else {}
    # A query that asks for the delta header builds a turn's context (docs/spec/003-memory-system.md §1): the `context` node.
    node = "context" if body.since_rev is not None else "hotpath"
    try:
        if body.agent is not None and body.agent not in (agent.name, agent.role):
            raise AgentScopeForbidden("`agent` must be your own name or role")
        if "agent_id" in filters and str(filters.pop("agent_id")) not in (str(agent.id), agent.name):
            raise AgentScopeForbidden(
                "filters.agent_id may only name you: an agent reads its own memories only"
            )
        config = category_config()
        # The allowlist, plus the caller's own uncategorised memories (None; `uncategorized` on the wire).
        allowed = config.readable_for(agent.role)
        requested = (
            list(dict.fromkeys(from_wire(c) for c in body.categories))
            if body.categories is not None
            else allowed
        )
        filtered = "category" in filters
        only = from_wire(filters.pop("category", None))
        config.check(agent.role, requested + [only])
        categories = [c for c in requested if not filtered or c == only]
        dense = _dense(body.query)
        hits = query.search(
            agent.id,
            text=body.query,
            categories=categories,
            filters=filters,
            top_k=body.top_k,
            threshold=body.threshold,
            relative_threshold=body.relative_threshold,
            with_match=body.return_ == "full",
            rag_caps={k: v for k, v in config.rag_caps(categories).items() if v < body.top_k},
            dense=dense,
            rest_vector=rest_vector if dense is not None and current_app.config["QUERY_REST"] else None,
        )
    except DomainError:
        events.note(
            agent.id, "search", "error", node=node, user_id=filters.get("user_id"), thread_id=body.thread_id
        )
        raise

    used, delta_out, rev = 0, None, None
    if body.thread_id is not None:
        if body.since_rev is not None:
            delta = changelog.delta_since(agent.id, body.thread_id, body.since_rev, allowed)
            rev = delta.rev
            bullets = list(delta.bullets)
            while (
                bullets
                and estimate_tokens(changelog.Delta(delta.since_rev, rev, 0, bullets).header)
                > body.budget_tokens
            ):
                bullets.pop(0)  # the oldest of the (at most three) changes goes first
            if bullets:
                header = changelog.Delta(delta.since_rev, rev, delta.changes, bullets).header
                used = estimate_tokens(header)
                delta_out = DeltaOut(
                    since_rev=delta.since_rev, rev=rev, changes=delta.changes, header=header, bullets=bullets
                )
        else:
            rev = changelog.current_revision(agent.id, body.thread_id)

    results: list[Bullet | FullResult] = []
    omitted = 0
    any_edge = False  # whether a returned memory has a relation edge at all
    for hit in hits:
        if body.return_ == "bullets":
            item = Bullet(
                id=hit.id, category=hit.category, text=f"[{hit.category or UNCATEGORIZED}] {hit.content}"
            )
            cost = estimate_tokens(item.text)
        else:
            item = FullResult(
                **{k: v for k, v in vars(hit).items() if k not in ("token_estimate", "linked")},
                tokens=hit.token_estimate,
            )
            cost = estimate_tokens(item.model_dump_json())
        if used + cost > body.budget_tokens:
            omitted += 1
            continue
        used += cost
        results.append(item)
        any_edge = any_edge or hit.linked

    linked: list[RelatedBullet] = []
    # No returned memory has an edge (the ranking said so): there is no neighbour to look up.
    if results and body.related and any_edge:
        where, params = filter_clauses(filters)
        for near in relations.neighbours(
            agent.id,
            [r.id for r in results],
            categories=categories,
            where=where,
            params=params,
            limit=body.related,
        ):
            bullet = RelatedBullet(
                id=near.id,
                category=near.category,
                text=f"[{near.category or UNCATEGORIZED}] {near.content}",
                related_to=near.related_to,
                strength=near.strength,
            )
            cost = estimate_tokens(bullet.text)
            if used + cost <= body.budget_tokens:
                used += cost
                linked.append(bullet)

    access.touch([r.id for r in results] + [r.id for r in linked])
    # The best relevance the question ranked (a memory a second hop let in first has none).
    best = max((h.relevance for h in hits if h.relevance is not None), default=None)
    events.note(
        agent.id,
        "search",
        "ok",
        node=node,
        user_id=filters.get("user_id"),
        thread_id=body.thread_id,
        sim=best,
    )
    end_read()  # nothing above wrote (touches and events are buffered): keeps the prepared statements
    return QueryOut(
        return_=body.return_,
        results=results,
        tokens_used=used,
        budget_tokens=body.budget_tokens,
        omitted=omitted,
        thread_id=body.thread_id,
        rev=rev,
        delta=delta_out,
        related=linked,
    )
