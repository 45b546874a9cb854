"""LangGraph's checkpointer and store over the agent API (docs/how-to/langgraph.md, docs/reference/api.md).

The checkpoint endpoints hold LangGraph's own data model (models/integrations/langgraph_checkpoints.py, its
reads, writes and thread operations in langgraph_checkpoint_{reads,writes,threads}.py); the
store endpoint maps items onto the caller's memories through the audited mutation path
(models/integrations/langgraph_store.py). Everything is scoped by the caller's token, like the rest of the API.
"""

from __future__ import annotations

from models import NotFound, atomic
from models.integrations import langgraph_checkpoint_reads as lg_reads
from models.integrations import langgraph_checkpoint_threads as lg_threads
from models.integrations import langgraph_checkpoint_writes as lg_writes
from models.integrations import langgraph_checkpoints as lg
from models.integrations import langgraph_store as store

from .auth import allowed_categories, category_config, current_agent
from .blueprint import api
from .schemas_langgraph import (
    BlobOut,
    CheckpointArgs,
    CheckpointConfigOut,
    CheckpointPage,
    CheckpointPut,
    CheckpointSearch,
    CheckpointTupleOut,
    PendingWriteOut,
    StoreBatch,
    StoreBatchOut,
    StoreGet,
    StoreItemOut,
    StorePut,
    StoreResultOut,
    StoreSearch,
    ThreadCopied,
    ThreadCopy,
    ThreadDeleted,
    ThreadIn,
    ThreadPrune,
    ThreadPruned,
    WritesOut,
    WritesPut,
    decode,
    encode,
)

TAG = "langgraph"


def _tuple_out(record: lg_reads.CheckpointRecord) -> CheckpointTupleOut:
    return CheckpointTupleOut(
        thread_id=record.thread_id,
        checkpoint_ns=record.checkpoint_ns,
        checkpoint_id=record.checkpoint_id,
        parent_checkpoint_id=record.parent_checkpoint_id,
        checkpoint=record.checkpoint,
        metadata=record.metadata,
        channel_values={
            ch: BlobOut(type=b.type, data=encode(b.data)) for ch, b in record.channel_values.items()
        },
        pending_writes=[
            PendingWriteOut(task_id=task, channel=ch, type=b.type, data=encode(b.data) or "")
            for task, ch, b in record.pending_writes
        ],
    )


@api.route(
    "/langgraph/checkpoints",
    "POST",
    summary="LangGraph put: store a checkpoint and its new channel blobs",
    tag=TAG,
    body=CheckpointPut,
    responses={201: CheckpointConfigOut},
)
def langgraph_put_checkpoint(body: CheckpointPut):
    """The checkpoint and its blobs are stored together or not at all. Storing a checkpoint id again
    replaces its document and metadata; a blob already stored at its (channel, version) is kept."""
    blobs = {(b.channel, lg.version_key(b.version)): lg.Blob(b.type, decode(b.data)) for b in body.blobs}
    lg_writes.put_checkpoint(
        current_agent().id,
        thread_id=body.thread_id,
        checkpoint_ns=body.checkpoint_ns,
        checkpoint=body.checkpoint.model_dump(),
        parent_checkpoint_id=body.parent_checkpoint_id,
        metadata=body.metadata,
        blobs=blobs,
    )
    return CheckpointConfigOut(
        thread_id=body.thread_id, checkpoint_ns=body.checkpoint_ns, checkpoint_id=body.checkpoint.id
    )


@api.route(
    "/langgraph/writes",
    "POST",
    summary="LangGraph put_writes: store a task's pending writes",
    tag=TAG,
    body=WritesPut,
    responses={200: WritesOut},
)
def langgraph_put_writes(body: WritesPut):
    writes = [lg_writes.Write(w.idx, w.channel, lg.Blob(w.type, decode(w.data))) for w in body.writes]
    stored = lg_writes.put_writes(
        current_agent().id,
        thread_id=body.thread_id,
        checkpoint_ns=body.checkpoint_ns,
        checkpoint_id=body.checkpoint_id,
        task_id=body.task_id,
        task_path=body.task_path,
        writes=writes,
    )
    return WritesOut(stored=stored)


@api.route(
    "/langgraph/checkpoint",
    "GET",
    summary="LangGraph get_tuple: one checkpoint, or a thread's latest",
    tag=TAG,
    args=CheckpointArgs,
    responses={200: CheckpointTupleOut},
)
def langgraph_get_checkpoint(args: CheckpointArgs):
    """With its channel values (as stored blobs), parent id and pending writes; 404 when there is none."""
    record = lg_reads.get_checkpoint(
        current_agent().id, args.thread_id, args.checkpoint_ns, args.checkpoint_id
    )
    if record is None:
        raise NotFound("no such checkpoint")
    return _tuple_out(record)


@api.route(
    "/langgraph/checkpoints/search",
    "POST",
    summary="LangGraph list: checkpoints newest first, filtered, in pages",
    tag=TAG,
    body=CheckpointSearch,
    responses={200: CheckpointPage},
)
def langgraph_list_checkpoints(body: CheckpointSearch):
    after = None
    if body.cursor:
        row_id, _, checkpoint_id = body.cursor.partition(":")
        after = (checkpoint_id, int(row_id))
    records, cursor = lg_reads.list_checkpoints(
        current_agent().id,
        thread_id=body.thread_id,
        checkpoint_ns=body.checkpoint_ns,
        checkpoint_id=body.checkpoint_id,
        metadata_filter=body.filter,
        before=body.before,
        limit=body.limit,
        after_row=after,
    )
    return CheckpointPage(
        checkpoints=[_tuple_out(r) for r in records],
        next_cursor=f"{cursor[1]}:{cursor[0]}" if cursor else None,
    )


@api.route(
    "/langgraph/threads/delete",
    "POST",
    summary="LangGraph delete_thread: every checkpoint, blob and write of a thread",
    tag=TAG,
    body=ThreadIn,
    responses={200: ThreadDeleted},
)
def langgraph_delete_thread(body: ThreadIn):
    """Deleting a thread that does not exist is not an error (0 deleted)."""
    return ThreadDeleted(
        thread_id=body.thread_id, deleted=lg_threads.delete_thread(current_agent().id, body.thread_id)
    )


@api.route(
    "/langgraph/threads/copy",
    "POST",
    summary="LangGraph copy_thread: copy a thread's checkpoints, blobs and writes to another",
    tag=TAG,
    body=ThreadCopy,
    responses={200: ThreadCopied},
)
def langgraph_copy_thread(body: ThreadCopy):
    copied = lg_threads.copy_thread(current_agent().id, body.source_thread_id, body.target_thread_id)
    return ThreadCopied(copied=copied)


@api.route(
    "/langgraph/threads/prune",
    "POST",
    summary="LangGraph prune: keep each namespace's latest checkpoint, or delete the threads",
    tag=TAG,
    body=ThreadPrune,
    responses={200: ThreadPruned},
)
def langgraph_prune_threads(body: ThreadPrune):
    return ThreadPruned(removed=lg_threads.prune(current_agent().id, body.thread_ids, body.strategy))


# ----- the store -----


def _item_out(found: store.Found) -> StoreItemOut:
    return StoreItemOut(
        namespace=found.namespace,
        key=found.key,
        value=found.value,
        memory_id=found.memory.id,
        category=found.memory.category,
        memory_type=found.memory.memory_type,
        created_at=found.created_at,
        updated_at=found.memory.updated_at,
        score=found.score,
    )


@api.route(
    "/langgraph/store/batch",
    "POST",
    summary="LangGraph store batch: get, put (null value: delete), search, list_namespaces",
    tag=TAG,
    body=StoreBatch,
    responses={200: StoreBatchOut},
    errors=(403, 409),
)
def langgraph_store_batch(body: StoreBatch):
    """Each item is one of your memories (actor `agent`, audited, reversible): a put creates or updates
    it, a null value soft-deletes it. Constitutional or audio/somatic/voice memories are refused (409),
    categories outside your allowlist too (403), and reads see only your allowlist. One transaction:
    a refused operation leaves every other operation of the batch undone."""
    agent = current_agent()
    allowed = allowed_categories()

    def check(categories):
        category_config().check(agent.role, categories)

    results = []
    with atomic():
        for op in body.ops:
            if isinstance(op, StoreGet):
                found = store.get_item(agent.id, op.namespace, op.key, allowed)
                results.append(StoreResultOut(op="get", item=_item_out(found) if found else None))
            elif isinstance(op, StorePut) and op.value is None:
                memory_id = store.delete_item(agent.id, op.namespace, op.key, check_category=check)
                results.append(StoreResultOut(op="put", deleted_memory_id=memory_id))
            elif isinstance(op, StorePut):
                found = store.put_item(
                    agent.id,
                    op.namespace,
                    op.key,
                    op.value,
                    category=op.category or (allowed[0] if allowed else "profile"),
                    memory_type=op.memory_type,
                    check_category=check,
                )
                results.append(StoreResultOut(op="put", item=_item_out(found)))
            elif isinstance(op, StoreSearch):
                found_items = store.search_items(
                    agent.id,
                    op.namespace_prefix,
                    allowed,
                    query=op.query,
                    filter=op.filter,
                    limit=op.limit,
                    offset=op.offset,
                )
                results.append(StoreResultOut(op="search", items=[_item_out(f) for f in found_items]))
            else:
                namespaces = store.list_namespaces(
                    agent.id,
                    allowed,
                    prefix=op.prefix,
                    suffix=op.suffix,
                    max_depth=op.max_depth,
                    limit=op.limit,
                    offset=op.offset,
                )
                results.append(StoreResultOut(op="list_namespaces", namespaces=namespaces))
    return StoreBatchOut(results=results)
