"""`Client` and `AsyncClient`: every endpoint of the agent API (/api/v1), typed.

Both share one description of each call (`_Endpoints`): a method builds the request and names the
model of the answer; the sync client sends it at once, the async client returns a coroutine. Errors
raise the typed exceptions of `memconsole_client.errors`, carrying the API's code and message.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import Any
from urllib.parse import quote

import httpx

from . import models as m
from .calls import Call, _body, _by_status, _clean, _field, _model, _raw
from .context import ContextCache, ContextEndpoint
from .errors import TransportError, error_for
from .recall import (
    DEFAULT_RECALL_THRESHOLD,
    RECALL_BUDGET_TOKENS,
    RECALL_TOP_K,
    Recall,
    RecallCounts,
    outcome,
    should_recall,
)

DEFAULT_TIMEOUT = 30.0
USER_AGENT = "memconsole-client/0.1"

# The operationId of each API operation -> the method that calls it (a test checks the coverage).
OPERATIONS = {
    "memory_query": "query",
    "get_context": "context",
    "create_memory": "save_memory",
    "get_memory": "get_memory",
    "update_memory": "update_memory",
    "delete_memory": "delete_memory",
    "restore_memory": "restore_memory",
    "list_restorable": "list_restorable",
    "memory_history": "memory_history",
    "export_user": "export_user",
    "create_procedure": "save_procedure",
    "queue_extraction": "queue_extraction",
    "put_checkpoint": "put_supervisor_checkpoint",
    "get_checkpoint": "get_supervisor_checkpoint",
    "list_patches": "list_patches",
    "get_patch": "get_patch",
    "confirm_patch": "confirm_patch",
    "reject_patch": "reject_patch",
    "get_agent": "get_agent",
    "note_turn": "note_turn",
    "get_refinement_prompt": "get_refinement_prompt",
    "put_refinement_prompt": "set_refinement_prompt",
    "put_mechanic_preconsent": "set_mechanic_preconsent",
    "list_grants": "list_grants",
    "revoke_mechanic_grant": "revoke_grant",
    "langgraph_put_checkpoint": "langgraph_put_checkpoint",
    "langgraph_put_writes": "langgraph_put_writes",
    "langgraph_get_checkpoint": "langgraph_get_checkpoint",
    "langgraph_list_checkpoints": "langgraph_list_checkpoints",
    "langgraph_delete_thread": "langgraph_delete_thread",
    "langgraph_copy_thread": "langgraph_copy_thread",
    "langgraph_prune_threads": "langgraph_prune_threads",
    "langgraph_store_batch": "langgraph_store_batch",
}


def _settings(base_url: str | None, token: str | None) -> tuple[str, str]:
    base_url = base_url or os.environ.get("MEMCONSOLE_URL")
    token = token or os.environ.get("MEMCONSOLE_TOKEN")
    if not base_url or not token:
        raise ValueError("give base_url and token (or set MEMCONSOLE_URL and MEMCONSOLE_TOKEN)")
    base_url = base_url.rstrip("/")
    if not base_url.endswith("/api/v1"):
        base_url += "/api/v1"
    return base_url, token


class _Endpoints(ContextEndpoint):
    """Every operation of the agent API, as a Call handed to `_send`."""

    def _send(self, call: Call) -> Any:  # pragma: no cover - each client defines it
        raise NotImplementedError

    # ----- memory -----

    def query(
        self,
        query: str = "",
        *,
        categories: list[str] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        return_: str | None = None,
        budget_tokens: int | None = None,
        threshold: float | None = None,
        relative_threshold: float | None = None,
        thread_id: str | None = None,
        since_rev: int | None = None,
        related: int | None = None,
        agent: str | None = None,
    ) -> m.QueryResult:
        """memory.query: ranked retrieval within your allowlist (POST /memory/query)."""
        payload = _clean(
            {
                "query": query,
                "categories": categories,
                "filters": filters,
                "top_k": top_k,
                "return": return_,
                "budget_tokens": budget_tokens,
                "threshold": threshold,
                "relative_threshold": relative_threshold,
                "thread_id": thread_id,
                "since_rev": since_rev,
                "related": related,
                "agent": agent,
            }
        )
        return self._send(Call("POST", "/memory/query", _model(m.QueryResult), json=payload))

    def save_memory(
        self,
        content: str,
        *,
        category: str,
        memory_type: str | None = None,
        importance: int | None = None,
        pinned: bool | None = None,
        tags: list[str] | None = None,
        field: str | None = None,
        user_id: str | None = None,
        thread_id: str | None = None,
        run_id: str | None = None,
        actor_id: str | None = None,
        role: str | None = None,
        turn_id: str | None = None,
    ) -> m.MemoryWritten | m.PatchProposed:
        """Save a memory (POST /memory): the memory written, or a patch held for the user's consent.
        `turn_id` names the user turn the memory came from; a held patch's consent must come from another."""
        payload = _clean(
            {
                "content": content,
                "category": category,
                "memory_type": memory_type,
                "importance": importance,
                "pinned": pinned,
                "tags": tags,
                "field": field,
                "user_id": user_id,
                "thread_id": thread_id,
                "run_id": run_id,
                "actor_id": actor_id,
                "role": role,
                "turn_id": turn_id,
            }
        )
        parse = _by_status({201: m.MemoryWritten, 202: m.PatchProposed})
        return self._send(Call("POST", "/memory", parse, json=payload))

    def get_memory(self, memory_id: int) -> m.Memory:
        return self._send(Call("GET", f"/memory/{int(memory_id)}", _model(m.Memory)))

    def update_memory(self, memory_id: int, **changes: Any) -> m.MemoryWritten | m.PatchProposed:
        """Change fields of a memory (PATCH /memory/{id}); pass a field as None to clear it."""
        parse = _by_status({200: m.MemoryWritten, 202: m.PatchProposed})
        return self._send(Call("PATCH", f"/memory/{int(memory_id)}", parse, json=changes))

    def delete_memory(self, memory_id: int) -> m.MemoryDeleted:
        return self._send(Call("DELETE", f"/memory/{int(memory_id)}", _model(m.MemoryDeleted)))

    def restore_memory(self, memory_id: int) -> m.MemoryWritten:
        return self._send(Call("POST", f"/memory/{int(memory_id)}/restore", _model(m.MemoryWritten)))

    def list_restorable(self, *, limit: int | None = None, cursor: str | None = None) -> m.RestorableList:
        """A page of your memories that can still be restored (deleted, or expired before their purge date),
        the most recent deletion first; pass `next_cursor` as `cursor` for the next page."""
        params = _clean({"limit": limit, "cursor": cursor})
        return self._send(Call("GET", "/memories/restorable", _model(m.RestorableList), params=params))

    def memory_history(self, memory_id: int, *, limit: int | None = None) -> m.History:
        params = _clean({"limit": limit})
        return self._send(Call("GET", f"/memory/{int(memory_id)}/history", _model(m.History), params=params))

    def export_user(self, user_id: str) -> list[m.ExportLine]:
        """Everything held about one user: one line per memory with its history, then a summary line."""
        return self._send(
            Call("GET", "/export", _model(list[m.ExportLine]), params={"user_id": user_id}, ndjson=True)
        )

    def save_procedure(self, title: str, steps: list[str], **scoping: Any) -> m.MemoryWritten:
        payload = _clean({"title": title, "steps": steps, **scoping})
        return self._send(Call("POST", "/memory/procedure", _model(m.MemoryWritten), json=payload))

    def queue_extraction(
        self, turn: str, *, user_id: str | None = None, thread_id: str | None = None
    ) -> m.ExtractionQueued:
        payload = _clean({"turn": turn, "user_id": user_id, "thread_id": thread_id})
        return self._send(Call("POST", "/memory/extract", _model(m.ExtractionQueued), json=payload))

    # ----- the supervisor checkpoint (one JSON document per thread) -----

    def put_supervisor_checkpoint(
        self, thread_id: str, checkpoint_data: dict[str, Any], *, user_id: str = ""
    ) -> m.SupervisorCheckpoint:
        payload = {"user_id": user_id, "checkpoint_data": checkpoint_data}
        path = f"/checkpoints/{quote(thread_id, safe='')}"
        return self._send(Call("PUT", path, _model(m.SupervisorCheckpoint), json=payload))

    def get_supervisor_checkpoint(
        self, thread_id: str, *, user_id: str = ""
    ) -> m.SupervisorCheckpoint | None:
        path = f"/checkpoints/{quote(thread_id, safe='')}"
        return self._send(
            Call("GET", path, _model(m.SupervisorCheckpoint), params={"user_id": user_id}, none_on_404=True)
        )

    # ----- consent patches -----

    def list_patches(self, *, status: str | None = None) -> list[m.Patch]:
        params = _clean({"status": status})
        return self._send(Call("GET", "/patches", _field("patches", list[m.Patch]), params=params))

    def get_patch(self, patch_id: int) -> m.Patch:
        return self._send(Call("GET", f"/patches/{int(patch_id)}", _model(m.Patch)))

    def confirm_patch(self, patch_id: int, *, user_turn: str, source: str = "chat_ack") -> m.PatchDecided:
        """The user agreed: apply a held patch. `user_turn` is your id of the user's turn (message or UI
        event) that gave the acknowledgement, a later one than the write's `turn_id` (409 otherwise)."""
        body = {"source": source, "user_turn": user_turn}
        return self._send(
            Call("POST", f"/patches/{int(patch_id)}/confirm", _model(m.PatchDecided), json=body)
        )

    def reject_patch(self, patch_id: int) -> m.PatchDecided:
        return self._send(Call("POST", f"/patches/{int(patch_id)}/reject", _model(m.PatchDecided)))

    # ----- the agent's own settings -----

    def get_agent(self) -> m.AgentInfo:
        return self._send(Call("GET", "/agent", _model(m.AgentInfo)))

    def note_turn(
        self, recalled: bool, *, thread_id: str | None = None, user_id: str | None = None
    ) -> m.TurnNoted:
        """Note one of your turns for the recall figures (POST /turns); `recall()` does it for you."""
        payload = _clean({"recalled": recalled, "thread_id": thread_id, "user_id": user_id})
        return self._send(Call("POST", "/turns", _model(m.TurnNoted), json=payload))

    def get_refinement_prompt(self) -> m.RefinementPrompt:
        return self._send(Call("GET", "/agent/refinement-prompt", _model(m.RefinementPrompt)))

    def set_refinement_prompt(self, prompt: str | None) -> m.RefinementPrompt:
        return self._send(
            Call(
                "PUT",
                "/agent/refinement-prompt",
                _model(m.RefinementPrompt),
                json={"refinement_prompt": prompt},
            )
        )

    def set_mechanic_preconsent(self, preconsent: bool) -> m.Preconsent:
        return self._send(
            Call("PUT", "/agent/mechanic-preconsent", _model(m.Preconsent), json={"preconsent": preconsent})
        )

    def list_grants(self) -> list[m.Grant]:
        return self._send(Call("GET", "/mechanic/grants", _field("grants", list[m.Grant])))

    def revoke_grant(self, grant_id: int) -> m.Grant:
        return self._send(Call("POST", f"/mechanic/grants/{int(grant_id)}/revoke", _model(m.Grant)))

    # ----- LangGraph (the wire format memconsole_client.langgraph speaks; JSON in, JSON out) -----

    def langgraph_put_checkpoint(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._send(Call("POST", "/langgraph/checkpoints", _raw, json=payload))

    def langgraph_put_writes(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._send(Call("POST", "/langgraph/writes", _raw, json=payload))

    def langgraph_get_checkpoint(
        self, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
    ) -> dict[str, Any] | None:
        params = _clean(
            {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}
        )
        return self._send(Call("GET", "/langgraph/checkpoint", _raw, params=params, none_on_404=True))

    def langgraph_list_checkpoints(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._send(Call("POST", "/langgraph/checkpoints/search", _raw, json=payload))

    def langgraph_delete_thread(self, thread_id: str) -> dict[str, Any]:
        return self._send(Call("POST", "/langgraph/threads/delete", _raw, json={"thread_id": thread_id}))

    def langgraph_copy_thread(self, source_thread_id: str, target_thread_id: str) -> dict[str, Any]:
        payload = {"source_thread_id": source_thread_id, "target_thread_id": target_thread_id}
        return self._send(Call("POST", "/langgraph/threads/copy", _raw, json=payload))

    def langgraph_prune_threads(self, thread_ids: list[str], strategy: str = "keep_latest") -> dict[str, Any]:
        payload = {"thread_ids": list(thread_ids), "strategy": strategy}
        return self._send(Call("POST", "/langgraph/threads/prune", _raw, json=payload))

    def langgraph_store_batch(self, ops: list[dict[str, Any]]) -> list[m.StoreResult]:
        """Store operations in one transaction: {"op": "get"|"put"|"search"|"list_namespaces", ...}."""
        return self._send(
            Call("POST", "/langgraph/store/batch", _field("results", list[m.StoreResult]), json={"ops": ops})
        )


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "User-Agent": USER_AGENT, "Accept": "application/json"}


def _result(call: Call, response: httpx.Response) -> Any:
    body = _body(response, call.ndjson)
    if response.status_code >= 400:
        if call.none_on_404 and response.status_code == 404:
            return None
        raise error_for(response.status_code, body, response.headers)
    if call.on_response is not None:
        return call.on_response(response)
    return call.parse(response.status_code, body)


class Client(_Endpoints):
    """The agent API over HTTP, synchronously. `base_url` is the console's address (with or without
    `/api/v1`); `token` the agent's API token. Both default to MEMCONSOLE_URL and MEMCONSOLE_TOKEN.
    Use as a context manager, or call `close()`."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url, token = _settings(base_url, token)
        self._http = http or httpx.Client(timeout=timeout)
        self._headers = _headers(token)
        self._context = ContextCache()
        self.recall_counts = RecallCounts()

    def _send(self, call: Call) -> Any:
        try:
            response = self._http.request(
                call.method,
                self.base_url + call.path,
                json=call.json,
                params=call.params,
                headers={**self._headers, **(call.headers or {})},
            )
        except httpx.TransportError as error:
            raise TransportError(f"{type(error).__name__} talking to {self.base_url}") from error
        return _result(call, response)

    def recall(
        self,
        query: str,
        *,
        confidence: float,
        threshold: float = DEFAULT_RECALL_THRESHOLD,
        thread_id: str | None = None,
        user_id: str | None = None,
        top_k: int = RECALL_TOP_K,
        budget_tokens: int = RECALL_BUDGET_TOKENS,
        **query_args: Any,
    ) -> Recall:
        """On-demand recall (memconsole_client.recall): memory.query only when `confidence` is below
        `threshold`; the turn is noted either way and counted in `recall_counts`."""
        recalled = should_recall(confidence, threshold)
        self.note_turn(recalled, thread_id=thread_id, user_id=user_id)
        result = (
            self.query(query, top_k=top_k, budget_tokens=budget_tokens, **query_args) if recalled else None
        )
        return outcome(self.recall_counts, recalled, result)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Endpoints):
    """The same API with every method a coroutine: `await client.query("...")`."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url, token = _settings(base_url, token)
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._headers = _headers(token)
        self._context = ContextCache()
        self.recall_counts = RecallCounts()

    def _send(self, call: Call) -> Awaitable[Any]:
        return self._asend(call)

    async def _asend(self, call: Call) -> Any:
        try:
            response = await self._http.request(
                call.method,
                self.base_url + call.path,
                json=call.json,
                params=call.params,
                headers={**self._headers, **(call.headers or {})},
            )
        except httpx.TransportError as error:
            raise TransportError(f"{type(error).__name__} talking to {self.base_url}") from error
        return _result(call, response)

    async def recall(
        self,
        query: str,
        *,
        confidence: float,
        threshold: float = DEFAULT_RECALL_THRESHOLD,
        thread_id: str | None = None,
        user_id: str | None = None,
        top_k: int = RECALL_TOP_K,
        budget_tokens: int = RECALL_BUDGET_TOKENS,
        **query_args: Any,
    ) -> Recall:
        """`Client.recall`, awaited."""
        recalled = should_recall(confidence, threshold)
        await self.note_turn(recalled, thread_id=thread_id, user_id=user_id)
        result = (
            await self.query(query, top_k=top_k, budget_tokens=budget_tokens, **query_args)
            if recalled
            else None
        )
        return outcome(self.recall_counts, recalled, result)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["AsyncClient", "Client", "OPERATIONS"]
