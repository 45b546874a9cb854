"""GET /api/v1/context: the agent's prompt block in one cacheable call (docs/spec/000-requirements.md, "The
Knife": an agent holds its current memories in its system prompt). The block itself is built in
models/retrieval/context.py; this module adds the usage figures and the delta header, answers a current
ETag with 304, and renders JSON or the documented text layout (docs/reference/api.md, "Context block")."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from flask import Response, current_app, request

from models import ValidationFailed
from models.db import utcnow
from models.history import changelog
from models.retrieval import context
from models.retrieval import context_layout as layout

from . import context_cache
from .auth import category_config, current_agent
from .blueprint import api
from .schemas import ContextArgs, ContextOut, ContextUsage, DeltaOut


def _paging(page: context.Page, text: bool) -> dict[str, Any]:
    """What a page shows of the paging: the text form only whether it is the last page (which carries the
    delta and the usage line), JSON the counts and the next cursor."""
    if text:
        return {"last": page.next_cursor is None}
    return {"total": page.total, "next": page.next_cursor}


def _cache_bytes() -> int:
    return int(current_app.config["CONTEXT_CACHE_MB"] * 2**20)


def _json_out(name, days, args, rev, delta_out, usage, page, tokens: int, memories: int) -> str:
    """ContextOut as JSON but for the memories' sections, which the caller puts in front
    (`layout.json_sections`)."""
    out = {
        "agent": name,
        "journal_days": days,
        "thread_id": args.thread_id,
        "rev": rev,
        "delta": delta_out.model_dump(mode="json") if delta_out else None,
        "usage": usage.model_dump(mode="json"),
        "page": {
            "max_tokens": args.max_tokens,
            "tokens": tokens,
            "memories": memories,
            "total_memories": page.total,
            "next_cursor": page.next_cursor,
        },
    }
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def _answer(body: bytes, etag: str, text: bool) -> Response:
    response = Response(body, mimetype="text/plain" if text else "application/json")
    _cache_headers(response, etag)
    return response


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
    summary="Your prompt block: every core memory, whole categories, this week's journals, usage; ETag-cached",
    tag="memory",
    args=ContextArgs,
    responses={200: ContextOut, 304: None},
    text_too=True,
)
def get_context(args: ContextArgs):
    """Every active core memory of yours, then every other active memory of your categories configured
    `context: all` (`always`), then your active journals of the journal window (CONTEXT_JOURNAL_DAYS),
    each oldest origin date first; with `thread_id` the thread's revision, and
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
    window: dict[str, Any] = {
        "now": utcnow(),
        "journal_window": timedelta(days=days),
    }
    config = category_config()
    categories = config.readable_for(agent.role)
    window["whole"] = config.whole_for(agent.role)  # categories in the block whole: docs/reference/api.md

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
    usage_line = layout.usage_line(
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
    paged = args.max_tokens is not None or args.cursor is not None
    fmt = "text" if text else "json"
    # The digest is kept under the agent's block version (set by the database at every change the block
    # could show: migration 0024) and what else selects the block's memories.
    kept_under = (agent.block_version, tuple(categories), tuple(window["whole"]), days)
    whole = None
    outline: context.Outline | None = None  # PostgreSQL, unpaged: the block's signatures, no text read
    known = context_cache.fragments(agent.id, fmt)  # what this process wrote of each memory, by signature
    if not paged:
        whole = context_cache.digest(agent.id, fmt, kept_under, window["now"])
        # The outline decides a 304 without reading any text, and says which memories this process has not
        # written yet; asked for neither, one read of the whole block costs less.
        if (
            whole is None
            and (conditional or known)
            and (outline := context.outline(agent.id, categories, **window, text=text))
        ):
            whole = outline.digest
            context_cache.keep_digest(agent.id, fmt, kept_under, whole)
    if whole is not None:  # unpaged, the digest kept or summed in one row: no text read for the ETag
        etag = context.etag(
            whole.digest, shown | _paging(context.Page([], whole.memories, None), text), text=text
        )
        if conditional and conditional.contains_weak(etag.strip('"')):
            return _not_modified(etag)
        kept = context_cache.get(agent.id, fmt, etag)
        if kept is not None:
            return _answer(kept, etag, text)
    elif conditional:  # decide on signatures first, read the text only if it changed
        signed = context.entries(agent.id, categories, **window, text=text, content=False)
        if not paged:  # SQLite: signed here, kept for the next request
            context_cache.keep_digest(
                agent.id, fmt, kept_under, context.whole_digest(signed, window["journal_window"])
            )
        page = context.page(signed, cursor=args.cursor, max_tokens=args.max_tokens)
        etag = context.etag(context.page_digest(page.entries), shown | _paging(page, text), text=text)
        if conditional.contains_weak(etag.strip('"')):
            return _not_modified(etag)
    # Read the block. This process keeps what it wrote of each memory under the memory's signature: on
    # PostgreSQL, unpaged, the outline gives the block's signatures and only the memories not written yet
    # are read (after one change, one memory's text, not a thousand); else, or if a memory changed between
    # the outline and that read, the whole block in one statement.
    if outline is None and not paged and known:
        outline = context.outline(agent.id, categories, **window, text=text)
    read = context.fill(outline, known, agent.id, categories, **window, text=text) if outline else None
    if outline is not None and read is not None:
        items = outline.items()
        starts = layout.section_starts(items)
        page = context.Page([], len(items), None)
        tokens, digest = sum(outline.tokens), outline.digest
    else:
        block = read = context.entries(agent.id, categories, **window, text=text)
        page = context.page(block, cursor=args.cursor, max_tokens=args.max_tokens)
        block_items = layout.items(block)
        items = layout.items(page.entries) if paged else block_items
        starts = layout.section_starts(block_items)
        tokens, digest = page.tokens, context.whole_digest(block, window["journal_window"])
    if not paged:
        context_cache.keep_digest(agent.id, fmt, kept_under, digest)
    block_digest = digest.digest if not paged else context.page_digest(page.entries)
    etag = context.etag(block_digest, shown | _paging(page, text), text=text)
    frags = layout.fragments((sig for _, sig in items), known, read, text=text)

    if text:
        body = layout.render(
            items,
            frags,
            starts=starts,
            last=page.next_cursor is None,
            journal_days=days,
            delta_header=header,
            usage_line=usage_line,
        )
        rendered = body.encode()
    else:
        arrays = layout.json_sections(items, frags)
        out = _json_out(agent.name, days, args, rev, delta_out, usage, page, tokens, len(items))
        rendered = f'{{"core":{arrays["core"]},"always":{arrays["always"]},"journal":{arrays["journal"]},{out[1:]}'.encode()
    if not paged:
        context_cache.put(agent.id, fmt, etag, rendered, frags, _cache_bytes())
    return _answer(rendered, etag, text)
