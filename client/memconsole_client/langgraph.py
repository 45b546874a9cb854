"""LangGraph integration (extra `memconsole-client[langgraph]`; docs/how-to/langgraph.md).

- `ConsoleCheckpointSaver`: a `BaseCheckpointSaver` keeping LangGraph's own data model (checkpoint
  ids, parents, namespaces, channel versions and blobs, pending writes) in the console, per agent.
  Values are serialised here with the saver's `serde` (`dumps_typed` / `loads_typed`) and travel
  as base64; the server never unpickles or interprets them.
- `ConsoleStore`: a `BaseStore` whose items are the agent's memories, so every put and delete is
  audited, reversible in the Time Machine, refused on constitutional memories and bound by the
  agent's category allowlist.
"""

from __future__ import annotations

import asyncio
import base64
import random
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from . import models as m
from .client import DEFAULT_TIMEOUT, AsyncClient, Client, _settings

LIST_PAGE = 100  # the API's largest page of checkpoints
STORE_BATCH = 100  # the API's largest store batch


class _Clients:
    """A sync client, and an async one per event loop (an httpx.AsyncClient's connections belong to
    the loop that opened them, and a saver may outlive one `asyncio.run`)."""

    def __init__(self, base_url: str | None, token: str | None, timeout: float) -> None:
        base_url, token = _settings(base_url, token)
        self.sync = Client(base_url, token, timeout=timeout)
        self._settings = (base_url, token, timeout)
        self._async: AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def aio(self) -> AsyncClient:
        loop = asyncio.get_running_loop()
        if self._async is None or self._loop is not loop:
            base_url, token, timeout = self._settings
            self._async, self._loop = AsyncClient(base_url, token, timeout=timeout), loop
        return self._async

    def close(self) -> None:
        self.sync.close()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()
            self._async = None


class _Closing:
    """`close()` / `await aclose()`, or use the saver or store as a (sync or async) context manager."""

    _clients: _Clients

    def close(self) -> None:
        """Close the sync connections (and forget the async ones: close those with `aclose`)."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close the connections of the running event loop's client, and the sync ones."""
        await self._clients.aclose()
        self._clients.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


class ConsoleCheckpointSaver(_Closing, BaseCheckpointSaver[str]):
    """LangGraph checkpoints in the memory console, scoped by the agent's token.

    ```python
    saver = ConsoleCheckpointSaver(base_url="http://127.0.0.1:5000", token=agent_token)
    graph = builder.compile(checkpointer=saver)
    ```
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        serde: SerializerProtocol | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(serde=serde)
        self._clients = _Clients(base_url, token, timeout)

    # ----- (de)serialisation and payloads -----

    def _dump(self, value: Any) -> dict[str, Any]:
        type_, data = self.serde.dumps_typed(value)
        return {"type": type_, "data": _b64(data)}

    def _load(self, blob: dict[str, Any]) -> Any:
        return self.serde.loads_typed((blob["type"], base64.b64decode(blob["data"] or "")))

    def _put_payload(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[dict[str, Any], RunnableConfig]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        document = dict(checkpoint)
        values = document.pop("channel_values", {})
        # Like LangGraph's own savers: a blob per channel in new_versions; unchanged channels keep
        # the blob already stored at their version.
        blobs = [
            {
                "channel": channel,
                "version": version,
                **(self._dump(values[channel]) if channel in values else {"type": "empty", "data": None}),
            }
            for channel, version in new_versions.items()
        ]
        payload = {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "parent_checkpoint_id": configurable.get("checkpoint_id"),
            "checkpoint": document,
            "metadata": get_serializable_checkpoint_metadata(config, metadata),
            "blobs": blobs,
        }
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        return payload, next_config

    def _writes_payload(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> dict[str, Any]:
        configurable = config["configurable"]
        return {
            "thread_id": str(configurable["thread_id"]),
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": configurable["checkpoint_id"],
            "task_id": task_id,
            "task_path": task_path,
            "writes": [
                {"idx": WRITES_IDX_MAP.get(channel, idx), "channel": channel, **self._dump(value)}
                for idx, (channel, value) in enumerate(writes)
            ],
        }

    def _tuple(self, body: dict[str, Any]) -> CheckpointTuple:
        thread_id, ns = body["thread_id"], body["checkpoint_ns"]
        checkpoint = {
            **body["checkpoint"],
            "channel_values": {ch: self._load(blob) for ch, blob in body["channel_values"].items()},
        }
        parent = body.get("parent_checkpoint_id")
        return CheckpointTuple(
            config={
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": body["checkpoint_id"],
                }
            },
            checkpoint=checkpoint,  # type: ignore[arg-type]
            metadata=body["metadata"],
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}}
                if parent
                else None
            ),
            pending_writes=[(w["task_id"], w["channel"], self._load(w)) for w in body["pending_writes"]],
        )

    @staticmethod
    def _get_args(config: RunnableConfig) -> tuple[str, str, str | None]:
        configurable = config["configurable"]
        return (
            str(configurable["thread_id"]),
            configurable.get("checkpoint_ns", ""),
            get_checkpoint_id(config),
        )

    @staticmethod
    def _list_payload(
        config: RunnableConfig | None, filter: dict[str, Any] | None, before: RunnableConfig | None
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {}
        if config:
            configurable = config["configurable"]
            payload["thread_id"] = str(configurable["thread_id"])
            if configurable.get("checkpoint_ns") is not None:
                payload["checkpoint_ns"] = configurable["checkpoint_ns"]
            if checkpoint_id := get_checkpoint_id(config):
                payload["checkpoint_id"] = checkpoint_id
        if filter:
            payload["filter"] = filter
        if before is not None and (before_id := get_checkpoint_id(before)):
            payload["before"] = before_id
        return payload

    # ----- sync -----

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        payload, next_config = self._put_payload(config, checkpoint, metadata, new_versions)
        self._clients.sync.langgraph_put_checkpoint(payload)
        return next_config

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if writes:
            self._clients.sync.langgraph_put_writes(self._writes_payload(config, writes, task_id, task_path))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        body = self._clients.sync.langgraph_get_checkpoint(*self._get_args(config))
        return self._tuple(body) if body else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        payload = self._list_payload(config, filter, before)
        remaining = limit
        while remaining is None or remaining > 0:
            payload["limit"] = min(LIST_PAGE, remaining) if remaining is not None else LIST_PAGE
            page = self._clients.sync.langgraph_list_checkpoints(payload)
            for body in page["checkpoints"]:
                yield self._tuple(body)
            if remaining is not None:
                remaining -= len(page["checkpoints"])
            if not page["next_cursor"]:
                return
            payload["cursor"] = page["next_cursor"]

    def delete_thread(self, thread_id: str) -> None:
        self._clients.sync.langgraph_delete_thread(str(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._clients.sync.langgraph_copy_thread(str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if thread_ids:
            self._clients.sync.langgraph_prune_threads([str(t) for t in thread_ids], strategy)

    # ----- async -----

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        payload, next_config = self._put_payload(config, checkpoint, metadata, new_versions)
        await self._clients.aio.langgraph_put_checkpoint(payload)
        return next_config

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if writes:
            await self._clients.aio.langgraph_put_writes(
                self._writes_payload(config, writes, task_id, task_path)
            )

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        body = await self._clients.aio.langgraph_get_checkpoint(*self._get_args(config))
        return self._tuple(body) if body else None

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        payload = self._list_payload(config, filter, before)
        remaining = limit
        while remaining is None or remaining > 0:
            payload["limit"] = min(LIST_PAGE, remaining) if remaining is not None else LIST_PAGE
            page = await self._clients.aio.langgraph_list_checkpoints(payload)
            for body in page["checkpoints"]:
                yield self._tuple(body)
            if remaining is not None:
                remaining -= len(page["checkpoints"])
            if not page["next_cursor"]:
                return
            payload["cursor"] = page["next_cursor"]

    async def adelete_thread(self, thread_id: str) -> None:
        await self._clients.aio.langgraph_delete_thread(str(thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._clients.aio.langgraph_copy_thread(str(source_thread_id), str(target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if thread_ids:
            await self._clients.aio.langgraph_prune_threads([str(t) for t in thread_ids], strategy)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """LangGraph's PostgreSQL saver's versions: a zero-padded counter and a random tie-breaker."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


class ConsoleStore(_Closing, BaseStore):
    """LangGraph's long-term store on the agent's memories.

    Each (namespace, key) is one memory. A value `{"content": "text"}` is stored as that text, any other
    value as compact JSON. New items get `category` (default: the first category of the agent's
    allowlist) and `memory_type` (default `core`). A put that would change a constitutional memory,
    or one outside the allowlist, raises `memconsole_client.errors.ConstitutionalLocked` /
    `Forbidden`, and nothing of its batch is applied. `search` ranks by the share of the query's words
    found in the text (no embeddings); `supports_ttl` is False.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        category: str | None = None,
        memory_type: str = "core",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._clients = _Clients(base_url, token, timeout)
        self.category = category
        self.memory_type = memory_type

    def _payload(self, op: Op) -> dict[str, Any]:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return {"op": "get", "namespace": list(op.namespace), "key": op.key}
        if isinstance(op, PutOp):
            payload = {"op": "put", "namespace": list(op.namespace), "key": op.key, "value": op.value}
            if op.value is not None:
                payload["memory_type"] = self.memory_type
                if self.category:
                    payload["category"] = self.category
            return payload
        if isinstance(op, SearchOp):
            payload = {
                "op": "search",
                "namespace_prefix": list(op.namespace_prefix),
                "limit": op.limit,
                "offset": op.offset,
            }
            if op.query:
                payload["query"] = op.query
            if op.filter:
                payload["filter"] = op.filter
            return payload
        if isinstance(op, ListNamespacesOp):
            payload = {"op": "list_namespaces", "limit": op.limit, "offset": op.offset}
            for condition in op.match_conditions or ():
                payload[condition.match_type] = list(condition.path)
            if op.max_depth is not None:
                payload["max_depth"] = op.max_depth
            return payload
        raise ValueError(f"unknown store operation {type(op).__name__}")

    @staticmethod
    def _item(item: m.StoreItem, cls: type[Item] = Item) -> Item:
        fields = dict(
            namespace=tuple(item.namespace),
            key=item.key,
            value=item.value,
            created_at=item.created_at,
            updated_at=item.updated_at,
        )
        if cls is SearchItem:
            return SearchItem(**fields, score=item.score)
        return Item(**fields)

    def _results(self, results: list[m.StoreResult]) -> list[Result]:
        out: list[Result] = []
        for r in results:
            if r.op == "get":
                out.append(self._item(r.item) if r.item else None)
            elif r.op == "put":
                out.append(None)
            elif r.op == "search":
                out.append([self._item(i, SearchItem) for i in r.items or []])
            else:
                out.append([tuple(ns) for ns in r.namespaces or []])
        return out

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the operations in order, up to 100 in one transaction (larger batches in chunks of 100)."""
        payloads = [self._payload(op) for op in ops]
        results: list[Result] = []
        for start in range(0, len(payloads), STORE_BATCH):
            results += self._results(
                self._clients.sync.langgraph_store_batch(payloads[start : start + STORE_BATCH])
            )
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        payloads = [self._payload(op) for op in ops]
        results: list[Result] = []
        for start in range(0, len(payloads), STORE_BATCH):
            answer = await self._clients.aio.langgraph_store_batch(payloads[start : start + STORE_BATCH])
            results += self._results(answer)
        return results

    def memory_id(self, namespace: tuple[str, ...], key: str) -> int | None:
        """The id of the memory holding an item (its history and rollback are in the console)."""
        (result,) = self._clients.sync.langgraph_store_batch(
            [{"op": "get", "namespace": list(namespace), "key": key}]
        )
        return result.item.memory_id if result.item else None

    def history(self, namespace: tuple[str, ...], key: str) -> m.History | None:
        """The audited history of a live item's memory, newest first."""
        memory_id = self.memory_id(namespace, key)
        return self._clients.sync.memory_history(memory_id) if memory_id else None
