"""Request and response models of the LangGraph endpoints (/api/v1/langgraph/..., docs/how-to/langgraph.md).

Values are opaque to the server: the client serialises them with its saver's serializer and sends
(type, base64 bytes) pairs. Checkpoint documents and metadata are JSON objects, as LangGraph's
PostgreSQL saver stores them; the server reads only the checkpoint's id and channel versions.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from models.integrations.langgraph_checkpoints import MAX_CHECKPOINT_CHANNELS
from models.integrations.langgraph_store import NAMESPACE_SEPARATOR, StoreItem

from .schemas import MAX_ID, NO_NUL, CategoryName, MemoryType, QueryArgs, Request, Response, UtcDatetime

Text255 = Annotated[str, Field(min_length=1, max_length=255, pattern=NO_NUL)]
Namespace = Annotated[str, Field(max_length=255, pattern=NO_NUL)]
CheckpointId = Annotated[str, Field(min_length=1, max_length=128, pattern=NO_NUL)]
TypeTag = Annotated[str, Field(min_length=1, max_length=64, pattern=NO_NUL)]
Base64Text = Annotated[str, Field(max_length=12_000_000, pattern=r"^[A-Za-z0-9+/]*={0,2}$")]
Version = (
    Annotated[str, Field(min_length=1, max_length=128, pattern=NO_NUL)]
    | Annotated[int, Field(ge=-(2**53), le=2**53)]
    | Annotated[float, Field(allow_inf_nan=False)]
)
ChannelName = Annotated[str, Field(min_length=1, max_length=255, pattern=NO_NUL)]
Label = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^.\x00]+$")]
# A namespace is stored joined with its separator; the column's length is the limit (models/integrations/langgraph_store.py).
MAX_NAMESPACE_CHARS = StoreItem.__table__.c.namespace.type.length


def _fits_column(labels: list[str]) -> list[str]:
    joined = len(NAMESPACE_SEPARATOR.join(labels))
    if joined > MAX_NAMESPACE_CHARS:
        raise ValueError(
            f"the namespace's labels joined with '{NAMESPACE_SEPARATOR}' are {joined} characters; "
            f"the limit is {MAX_NAMESPACE_CHARS}"
        )
    return labels


def _namespace(min_length: int = 0) -> Any:
    return Annotated[
        list[Label],
        Field(
            min_length=min_length,
            max_length=10,
            description=f"Up to 10 labels, at most {MAX_NAMESPACE_CHARS} characters joined with "
            f"'{NAMESPACE_SEPARATOR}'.",
        ),
        AfterValidator(_fits_column),
    ]


StoreNamespace = _namespace(1)
StorePrefix = _namespace()
StoreKey = Annotated[str, Field(min_length=1, max_length=512, pattern=NO_NUL)]


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    """What JSON carries: 1e400 parses as infinity, which neither database stores as JSON."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        raise ValueError("must not contain infinite numbers") from None
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]


def decode(data: str | None) -> bytes | None:
    if data is None:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("data must be standard base64") from None


def encode(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


class BlobIn(Request):
    channel: Text255
    version: Version
    type: TypeTag = Field(description="The serializer's type tag (`empty` for a channel with no value).")
    data: Base64Text | None = Field(description="The serialised value, base64; null with type `empty`.")

    @model_validator(mode="after")
    def _base64(self) -> BlobIn:
        decode(self.data)
        return self


class CheckpointDocument(Request):
    """The checkpoint document LangGraph's saver sends, without `channel_values`. The server reads its
    `id` and `channel_versions`; every other key (`v`, `ts`, `versions_seen`, ...) is kept as sent."""

    model_config = ConfigDict(extra="allow", strict=True)

    id: CheckpointId
    channel_versions: Annotated[dict[ChannelName, Version], Field(max_length=MAX_CHECKPOINT_CHANNELS)] = (
        Field(
            description=f"Each channel's current version; at most {MAX_CHECKPOINT_CHANNELS:,} channels "
            "(MAX_CHECKPOINT_CHANNELS)."
        )
    )

    @model_validator(mode="after")
    def _finite(self) -> CheckpointDocument:
        _json_object(self.model_extra or {})
        return self


class CheckpointPut(Request):
    """LangGraph's `put`: the checkpoint document without channel values, its metadata, and a blob for
    every channel in `new_versions` (values already stored at their version are not sent again)."""

    thread_id: Text255
    checkpoint_ns: Namespace = ""
    parent_checkpoint_id: CheckpointId | None = None
    checkpoint: CheckpointDocument
    metadata: JsonObject = Field(default_factory=dict)
    blobs: Annotated[list[BlobIn], Field(max_length=1000)] = Field(default_factory=list)


class CheckpointConfigOut(Response):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str


class WriteIn(Request):
    idx: Annotated[int, Field(ge=-1000, le=1_000_000)] = Field(
        description="The write's index in the task; LangGraph's special channels use fixed negative ones."
    )
    channel: Text255
    type: TypeTag
    data: Base64Text

    @model_validator(mode="after")
    def _base64(self) -> WriteIn:
        decode(self.data)
        return self


class WritesPut(Request):
    """LangGraph's `put_writes`: a task's pending writes against one checkpoint."""

    thread_id: Text255
    checkpoint_ns: Namespace = ""
    checkpoint_id: CheckpointId
    task_id: Text255
    task_path: Annotated[str, Field(max_length=2048, pattern=NO_NUL)] = ""
    writes: Annotated[list[WriteIn], Field(min_length=1, max_length=1000)]


class WritesOut(Response):
    stored: int = Field(description="Writes sent; a (task, index) already stored keeps its first value.")


class CheckpointArgs(QueryArgs):
    thread_id: Text255
    checkpoint_ns: Namespace = ""
    checkpoint_id: CheckpointId | None = Field(default=None, description="Omitted: the latest checkpoint.")


class BlobOut(Response):
    type: str
    data: str | None


class PendingWriteOut(Response):
    task_id: str
    channel: str
    type: str
    data: str


class CheckpointTupleOut(Response):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    channel_values: dict[str, BlobOut] = Field(description="Per channel, the blob at its version.")
    pending_writes: list[PendingWriteOut] = Field(
        description="In LangGraph's order (task path, task id, index)."
    )


class CheckpointSearch(Request):
    """LangGraph's `list`: newest first. Omitting `thread_id` lists all your threads."""

    thread_id: Text255 | None = None
    checkpoint_ns: Namespace | None = Field(default=None, description="Omitted: every namespace.")
    checkpoint_id: CheckpointId | None = None
    filter: JsonObject | None = Field(
        default=None, description="Metadata that must be contained (JSON containment)."
    )
    before: CheckpointId | None = Field(default=None, description="Only checkpoints with a smaller id.")
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    cursor: Annotated[str, Field(max_length=200, pattern=r"^[0-9]{1,12}:[^\x00]{1,128}$")] | None = Field(
        default=None, description="`next_cursor` of the previous page."
    )

    @model_validator(mode="after")
    def _cursor(self) -> CheckpointSearch:
        if self.cursor is not None and int(self.cursor.partition(":")[0]) > MAX_ID:
            raise ValueError("cursor is not one this API returned")
        return self


class CheckpointPage(Response):
    checkpoints: list[CheckpointTupleOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class ThreadIn(Request):
    thread_id: Text255


class ThreadDeleted(Response):
    thread_id: str
    deleted: int = Field(description="Checkpoints removed (with their blobs and writes).")


class ThreadCopy(Request):
    source_thread_id: Text255
    target_thread_id: Text255


class ThreadCopied(Response):
    copied: int


class ThreadPrune(Request):
    thread_ids: Annotated[list[Text255], Field(min_length=1, max_length=100)]
    strategy: Literal["keep_latest", "delete"] = "keep_latest"


class ThreadPruned(Response):
    removed: int


# ----- the store -----


class StoreGet(Request):
    op: Literal["get"]
    namespace: StoreNamespace
    key: StoreKey


class StorePut(Request):
    op: Literal["put"]
    namespace: StoreNamespace
    key: StoreKey
    value: JsonObject | None = Field(description="The item's value; null deletes the item.")
    category: CategoryName | None = Field(
        default=None, description="A new item's category; default: the first of your allowlist."
    )
    memory_type: MemoryType = "core"


class StoreSearch(Request):
    op: Literal["search"]
    namespace_prefix: StorePrefix = Field(default_factory=list)
    query: Annotated[str, Field(max_length=1000, pattern=NO_NUL)] | None = None
    filter: JsonObject | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0


class StoreListNamespaces(Request):
    op: Literal["list_namespaces"]
    prefix: StorePrefix | None = None
    suffix: StorePrefix | None = None
    max_depth: Annotated[int, Field(ge=1, le=10)] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 100
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0


StoreOp = Annotated[StoreGet | StorePut | StoreSearch | StoreListNamespaces, Field(discriminator="op")]


class StoreBatch(Request):
    """LangGraph's `batch`: operations run in order in one transaction; a refused one refuses them all."""

    ops: Annotated[list[StoreOp], Field(min_length=1, max_length=100)]


class StoreItemOut(Response):
    namespace: list[str]
    key: str
    value: dict[str, Any]
    memory_id: int = Field(
        description="The memory holding the item: its history and rollback are the memory's."
    )
    category: str | None
    memory_type: str
    created_at: UtcDatetime
    updated_at: UtcDatetime
    score: float | None = None


class StoreResultOut(Response):
    op: Literal["get", "put", "search", "list_namespaces"]
    item: StoreItemOut | None = Field(
        default=None, description="get: the item or null; put: the item written."
    )
    items: list[StoreItemOut] | None = None
    namespaces: list[list[str]] | None = None
    deleted_memory_id: int | None = Field(
        default=None, description="put with a null value: the memory deleted."
    )


class StoreBatchOut(Response):
    results: list[StoreResultOut]
