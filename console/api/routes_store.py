"""Checkpoints (docs/spec/003-memory-system.md §15), consent patches (docs/spec/003-memory-system.md §10) and the OpenAPI document."""

from __future__ import annotations

from flask import jsonify

from models.changes import patches
from models.integrations.checkpoint import load_checkpoint, save_checkpoint

from .auth import current_agent
from .blueprint import api, bp
from .convert import memory_out, memory_rev, patch_out
from .schemas import (
    CheckpointArgs,
    CheckpointIn,
    CheckpointOut,
    ConfirmPatch,
    PatchDecided,
    PatchList,
    PatchListArgs,
    PatchOut,
)


def _checkpoint_out(row) -> CheckpointOut:
    return CheckpointOut(
        thread_id=row.thread_id,
        user_id=row.user_id,
        checkpoint_data=row.checkpoint_data,
        size_bytes=row.size_bytes,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


@api.route(
    "/checkpoints/<thread_id>",
    "PUT",
    summary="Save the supervisor checkpoint of a thread",
    tag="checkpoints",
    body=CheckpointIn,
    responses={200: CheckpointOut, 201: CheckpointOut},
)
def put_checkpoint(thread_id: str, body: CheckpointIn):
    """One checkpoint per (user, thread), replaced on every save; any JSON object up to 1 MiB (413 above)."""
    row, created = save_checkpoint(current_agent().id, body.user_id, thread_id, body.checkpoint_data)
    return _checkpoint_out(row), 201 if created else 200


@api.route(
    "/checkpoints/<thread_id>",
    "GET",
    summary="Load the supervisor checkpoint of a thread",
    tag="checkpoints",
    args=CheckpointArgs,
    responses={200: CheckpointOut},
)
def get_checkpoint(thread_id: str, args: CheckpointArgs):
    return _checkpoint_out(load_checkpoint(current_agent().id, args.user_id, thread_id))


@api.route(
    "/patches",
    "GET",
    summary="Your proposed patches (sensitive writes awaiting consent)",
    tag="consent",
    args=PatchListArgs,
    responses={200: PatchList},
)
def list_patches(args: PatchListArgs):
    """Newest first (100 at most). Patches pending for more than 7 days expire and lose their text."""
    return PatchList(patches=[patch_out(p) for p in patches.list_patches(current_agent().id, args.status)])


@api.route(
    "/patches/<int:patch_id>",
    "GET",
    summary="One proposed patch",
    tag="consent",
    responses={200: PatchOut},
)
def get_patch(patch_id: int):
    return patch_out(patches.get_patch(current_agent().id, patch_id))


@api.route(
    "/patches/<int:patch_id>/confirm",
    "POST",
    summary="The user consented: apply the held write",
    tag="consent",
    body=ConfirmPatch,
    responses={200: PatchDecided},
    errors=(409,),
)
def confirm_patch(patch_id: int, body: ConfirmPatch):
    """Call only after the user has explicitly agreed (in chat or in a UI), naming the user's turn that did
    (`user_turn`); it must be a later turn than the write's own (`turn_id`), so a write cannot consent to
    itself. The audit log records the acknowledgement."""
    agent_id = current_agent().id
    patch = patches.confirm(agent_id, patch_id, body.source, user_turn=body.user_turn)
    memory = patches.applied_memory(agent_id, patch)
    return PatchDecided(
        patch=patch_out(patch),
        memory=memory_out(memory) if memory else None,
        rev=memory_rev(agent_id, memory) if memory else None,
    )


@api.route(
    "/patches/<int:patch_id>/reject",
    "POST",
    summary="The user declined: drop the held write",
    tag="consent",
    responses={200: PatchDecided},
    errors=(409,),
)
def reject_patch(patch_id: int):
    patch = patches.reject(current_agent().id, patch_id)
    return PatchDecided(patch=patch_out(patch), memory=None, rev=None)


@bp.get("/openapi.json")
def openapi_document():
    """The OpenAPI 3.1 document, generated from the request and response models (no token needed)."""
    return jsonify(api.document())
