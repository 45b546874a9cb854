"""GET /api/v1/context: the agent's prompt block in one cacheable call (docs/spec/000-requirements.md, "The
Knife": an agent holds its current memories in its system prompt). The block itself is built in
models/retrieval/context.py; this module adds the usage figures and the delta header, answers a current
ETag with 304, and renders JSON or the documented text layout (docs/api.md, "Context block")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Response, current_app, request

from models import ValidationFailed
from models.db import utcnow
from models.history import changelog
from models.retrieval import context

from .auth import category_config, current_agent
from .blueprint import api
from .schemas import ContextArgs, ContextMemory, ContextOut, ContextPage, ContextUsage, DeltaOut


def _memory_out(entry: context.Entry) -> ContextMemory:
    return ContextMemory(
        id=entry.id,
        memory_type=entry.memory_type,  # type: ignore[arg-type]
        content=entry.content or "",
        origin_date=entry.created_at,
        tokens=entry.tokens,
        tags=list(entry.tags),
        category=entry.category,
        constitutional=entry.constitutional,
    )


def _paging(page: context.Page, text: bool) -> dict[str, Any]:
    """What a page shows of the paging: the text form only whether it is the last page (which carries the
    delta and the usage line), JSON the counts and the next cursor."""
    if text:
        return {"last": page.next_cursor is None}
    return {"total": page.total, "next": page.next_cursor}


def _not_modified(etag: str) -> Response:
    response = Response(status=304)
    _cache_headers(response, etag)
    return response


def _cache_headers(response: Response, etag: str) -> None:
    response.headers["ETag"] = etag
    # Each agent's own block: no shared cache may keep it, and a client revalidates before reuse.
    response.headers["Cache-Control"] = "private, no-cache"
    response.headers["Vary"] = "Authorization"


@api.route(
    "/context",
    "GET",
    summary="Your prompt block: every core memory, this week's journals, usage; ETag-cached",
    tag="memory",
    args=ContextArgs,
    responses={200: ContextOut, 304: None},
    text_too=True,
)
def get_context(args: ContextArgs):
    """Every active core memory of yours, then your active journals of the journal window
    (CONTEXT_JOURNAL_DAYS), each oldest origin date first; with `thread_id` the thread's revision, and
    with `since_rev` what changed since; your core tokens against your budget and when you were last
    refined. `format=text` gives the block as it goes into a system prompt (a stable layout: what did
    not change stays a byte-identical prefix). The ETag changes exactly when the block does: send it
    back as If-None-Match and an unchanged block is a 304 with no body. `max_tokens` pages the block
    (`cursor`: the previous page's `next_cursor`), each memory on exactly one page."""
    if args.since_rev is not None and args.thread_id is None:
        raise ValidationFailed("since_rev: needs thread_id", field="since_rev", rule="requires_thread_id")
    agent = current_agent()
    text = args.format == "text"
    days = int(current_app.config["CONTEXT_JOURNAL_DAYS"])
    window = {
        "now": utcnow(),
        "journal_window": timedelta(days=days),
    }
    categories = category_config().readable_for(agent.role)

    delta: changelog.Delta | None = None
    rev: int | None = None
    if args.thread_id is not None and args.since_rev is not None:
        delta = changelog.delta_since(agent.id, args.thread_id, args.since_rev, categories)
        rev = delta.rev
    elif args.thread_id is not None:
        rev = changelog.current_revision(agent.id, args.thread_id)
    delta_out = (
        DeltaOut(
            since_rev=delta.since_rev,
            rev=delta.rev,
            changes=delta.changes,
            header=delta.header,
            bullets=delta.bullets,
        )
        if delta is not None and delta.bullets
        else None
    )
    usage = ContextUsage(
        core_tokens=agent.core_tokens,
        core_count=agent.core_count,
        budget_tokens=agent.core_token_budget,
        over_budget=agent.core_tokens > agent.core_token_budget,
        last_refinement_at=agent.last_refinement_at,
    )
    usage_line = context.usage_line(
        agent.core_tokens, agent.core_count, agent.core_token_budget, agent.last_refinement_at, rev
    )
    header = delta_out.header if delta_out else ""
    # Exactly what the response shows besides the memories: the ETag is a hash of it and them.
    shown: dict[str, Any] = (
        {"days": days, "delta": header, "usage": usage_line}
        if text
        else {
            "agent": agent.name,
            "days": days,
            "thread": args.thread_id,
            "rev": rev,
            "delta": delta_out.model_dump(mode="json") if delta_out else None,
            "usage": usage.model_dump(mode="json"),
            "max_tokens": args.max_tokens,
        }
    )

    conditional = request.if_none_match
    if conditional:  # a client with a copy: decide on digests first, read the text only if it changed
        block = context.entries(agent.id, categories, **window, digest_only=True)
        page = context.page(block, cursor=args.cursor, max_tokens=args.max_tokens)
        etag = context.etag(page, shown | _paging(page, text), text=text)
        if conditional.contains_weak(etag.strip('"')):
            return _not_modified(etag)
    block = context.entries(agent.id, categories, **window)
    page = context.page(block, cursor=args.cursor, max_tokens=args.max_tokens)
    etag = context.etag(page, shown | _paging(page, text), text=text)

    if text:
        body = context.render(
            page,
            starts=context.section_starts(block),
            journal_days=days,
            delta_header=header,
            usage_line=usage_line,
        )
        response = Response(body, mimetype="text/plain")
    else:
        out = ContextOut(
            agent=agent.name,
            core=[_memory_out(e) for e in page.entries if e.memory_type == "core"],
            journal=[_memory_out(e) for e in page.entries if e.memory_type == "journal"],
            journal_days=days,
            thread_id=args.thread_id,
            rev=rev,
            delta=delta_out,
            usage=usage,
            page=ContextPage(
                max_tokens=args.max_tokens,
                tokens=page.tokens,
                memories=len(page.entries),
                total_memories=page.total,
                next_cursor=page.next_cursor,
            ),
        )
        response = Response(out.model_dump_json(by_alias=True), mimetype="application/json")
    _cache_headers(response, etag)
    return response
