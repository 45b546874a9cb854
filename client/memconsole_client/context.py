"""The context block (GET /context) with its ETag kept: each client remembers, per set of arguments, the
last block and its ETag, sends If-None-Match, and on 304 hands back the block it already holds — so an
agent may ask before every turn and pay for the block only when it changed (docs/reference/client.md, "The
context block").
"""

from __future__ import annotations

from typing import Any

import httpx

from . import models as m
from .calls import Call

Key = tuple[Any, ...]


class ContextCache:
    """The last block and ETag per request's arguments; `changed` says whether the last answer was new."""

    def __init__(self) -> None:
        self._kept: dict[Key, tuple[str, m.ContextBlock | str]] = {}
        self.changed: bool | None = None  # None until a block was asked for

    def params(
        self,
        format: str,
        max_tokens: int | None,
        cursor: str | None,
        thread_id: str | None,
        since_rev: int | None,
    ) -> dict[str, Any]:
        given = {
            "format": format,
            "max_tokens": max_tokens,
            "cursor": cursor,
            "thread_id": thread_id,
            "since_rev": since_rev,
        }
        return {k: v for k, v in given.items() if v is not None}

    def headers(self, params: dict[str, Any]) -> dict[str, str]:
        kept = self._kept.get(_key(params))
        return {"If-None-Match": kept[0]} if kept else {}

    def read(self, params: dict[str, Any], response: httpx.Response) -> m.ContextBlock | str:
        """The block of a 200 (kept with its ETag), or the kept one on a 304."""
        key = _key(params)
        if response.status_code == 304 and key in self._kept:
            self.changed = False
            return self._kept[key][1]
        etag = response.headers.get("ETag")
        block: m.ContextBlock | str
        if params.get("format") == "text":
            block = response.text
        else:
            block = m.ContextBlock.model_validate({**response.json(), "etag": etag})
        if etag:
            self._kept[key] = (etag, block)
        self.changed = True
        return block

    def forget(self) -> None:
        self._kept.clear()


class ContextEndpoint:
    """`context()`, shared by `Client` (an answer) and `AsyncClient` (a coroutine)."""

    _context: ContextCache

    def _send(self, call: Call) -> Any:  # pragma: no cover - each client defines it
        raise NotImplementedError

    def context(
        self,
        *,
        format: str = "json",
        max_tokens: int | None = None,
        cursor: str | None = None,
        thread_id: str | None = None,
        since_rev: int | None = None,
    ) -> Any:
        """Your prompt block (GET /context): a `ContextBlock`, or with `format="text"` the text to put in a
        system prompt. The last block per set of arguments is kept with its ETag and asked for with
        If-None-Match; an unchanged block (304) is answered from what is kept, and `context_changed` is
        then False. `max_tokens` pages the block: pass `page.next_cursor` as `cursor` for the next."""
        params = self._context.params(format, max_tokens, cursor, thread_id, since_rev)
        call = Call(
            "GET",
            "/context",
            parse=lambda status, body: body,
            params=params,
            headers=self._context.headers(params),
            on_response=lambda response: self._context.read(params, response),
        )
        return self._send(call)

    @property
    def context_changed(self) -> bool | None:
        """Whether the last `context()` answer was a new block (False: the kept one, after a 304)."""
        return self._context.changed


def _key(params: dict[str, Any]) -> Key:
    return tuple(sorted(params.items()))
