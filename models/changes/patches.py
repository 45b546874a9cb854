"""Consent policy (docs/explanation/governance.md, "Consent"): user-context writes wait for the user or for
corroboration.

A memory that sets a user-context field is tagged `field:<name>`. Creating or updating one never
touches `agent_memories` at once, whoever writes it (the agent API, multi-fact extraction, daily
consolidation): it files a proposed patch, held for 7 days, with one of two policies.

- `consent` — sensitive fields (preferred name, pronouns, city, language): applied only with a recorded
  acknowledgement by a person: an admin in the console, or the agent relaying the user's acknowledgement
  with a reference to the user's turn that gave it — a turn other than the one the write came from, so
  the flow that proposed a patch cannot confirm it.
- `signals` — every other (benign) field, e.g. tone or goals: applied as soon as two independent
  signals corroborate the same proposal: a mention (one per thread: a repeat in the same thread is
  the same signal), the user's explicit chat acknowledgement (or a UI click), or a theory-of-mind
  insight about that field with confidence ≥ 0.8. The write itself is the first mention.

The change is applied through the mutation path with the decision in the audit log. Rejected and
expired patches are emptied: the proposed text is dropped and only metadata remains.

Deleting such a memory is not held: removing personal data never needs consent, and a soft delete
is restorable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from models.changes.mutations import create_memory, update_memory
from models.changes.patch_tables import CONSENT_SOURCES, SIGNAL_KINDS, ConsentSignal, ProposedPatch
from models.changes.rules import AGENT_ACTOR, is_admin
from models.db import atomic, db, utcnow
from models.errors import DomainError, NotFound, ValidationFailed
from models.history.audit import new_op_id, write_audit
from models.memories.memory import AgentMemory

SENSITIVE_FIELDS = frozenset({"preferred_name", "pronouns", "city", "language"})
FIELD_TAG_PREFIX = "field:"
HOLD = timedelta(days=7)
SIGNALS_NEEDED = 2
TOM_HIGH_CONFIDENCE = 0.8


class PatchNotPending(DomainError):
    code = "patch_not_pending"
    http_status = 409


class ConsentFromProposingTurn(DomainError):
    code = "consent_same_turn"
    http_status = 409


def field_tags(tags: Iterable[str] | None) -> set[str]:
    return {
        t[len(FIELD_TAG_PREFIX) :]
        for t in tags or []
        if isinstance(t, str) and t.startswith(FIELD_TAG_PREFIX)
    }


def sensitive_fields(tags: Iterable[str] | None) -> list[str]:
    """The sensitive user-context fields these tags declare (sorted)."""
    return sorted(field_tags(tags) & SENSITIVE_FIELDS)


def context_field(tags: Iterable[str] | None) -> str | None:
    """The user-context field a memory with these tags sets: a sensitive one first, else the first."""
    fields = field_tags(tags)
    ordered = sorted(fields & SENSITIVE_FIELDS) or sorted(fields)
    return ordered[0] if ordered else None


def policy_for(field: str) -> str:
    return "consent" if field in SENSITIVE_FIELDS else "signals"


def _audit(patch: ProposedPatch, action: str, **data: Any) -> None:
    # Metadata only: the proposed text stays on the patch row and goes when the patch is decided.
    write_audit(
        op_id=new_op_id(),
        actor=patch.proposed_by or AGENT_ACTOR,
        action=action,
        agent_id=patch.agent_id,
        data={
            "patch_id": patch.id,
            "op": patch.op,
            "field": patch.field,
            "memory_id": patch.memory_id,
            "policy": patch.policy,
            **data,
        },
    )


def _value_key(op: str, field: str, memory_id: int | None, changes: dict[str, Any]) -> str:
    """What a proposal says, hashed: the same operation on the same target, user and field with the
    same words (case, punctuation and spacing aside) is the same proposal."""
    words = " ".join(
        "".join(ch if ch.isalnum() else " " for ch in str(changes.get("content", "")).lower()).split()
    )
    key = [op, field, memory_id, changes.get("user_id"), words, sorted(changes.get("tags") or [])]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


def propose(
    agent_id: int,
    op: str,
    field: str,
    changes: dict[str, Any],
    memory_id: int | None = None,
    *,
    actor: str = AGENT_ACTOR,
    turn: str | None = None,
) -> ProposedPatch:
    """Hold a write to a user-context field (7 days). `changes` are validated arguments of the mutation;
    `turn` names the user turn the write came from. The policy follows the field: `consent` for a
    sensitive one, `signals` for any other."""
    if op not in ("create", "update"):
        raise ValidationFailed("a patch creates or updates a memory")
    with atomic():
        now = utcnow()
        patch = ProposedPatch(
            agent_id=agent_id,
            op=op,
            field=field,
            memory_id=memory_id,
            user_id=changes.get("user_id"),
            changes=changes,
            status="pending",
            created_at=now,
            expires_at=now + HOLD,
            policy=policy_for(field),
            value_key=_value_key(op, field, memory_id, changes),
            proposed_by=actor,
            proposed_turn=_turn(turn, "turn"),
        )
        db.session.add(patch)
        db.session.flush()
        _audit(patch, "consent_proposed", expires_at=patch.expires_at.isoformat())
    return patch


def write_context(
    agent_id: int,
    op: str,
    field: str,
    changes: dict[str, Any],
    *,
    memory_id: int | None = None,
    actor: str = AGENT_ACTOR,
    signals: Iterable[tuple[str, str]] = (),
    turn: str | None = None,
) -> tuple[ProposedPatch, AgentMemory | None]:
    """The one way any writer (agent API, extraction, consolidation) changes a user-context field.

    Sensitive: a `consent` patch, always held (`signals` are ignored: consent is given to the held
    patch, by `confirm`). Benign: the pending `signals` patch proposing the same thing is found (or
    filed), these signals are added, and it is applied at once when two independent ones agree.
    Returns the patch and the memory written (None while held)."""
    if policy_for(field) == "consent":
        return propose(agent_id, op, field, changes, memory_id, actor=actor, turn=turn), None
    with atomic():
        expire_patches(agent_id)
        key = _value_key(op, field, memory_id, changes)
        patch = db.session.scalar(
            select(ProposedPatch)
            .where(
                ProposedPatch.agent_id == agent_id,
                ProposedPatch.value_key == key,
                ProposedPatch.status == "pending",
                ProposedPatch.policy == "signals",
            )
            .order_by(ProposedPatch.id)
            .limit(1)
            .with_for_update()
        )
        if patch is None:
            patch = propose(agent_id, op, field, changes, memory_id, actor=actor, turn=turn)
        for kind, source in signals:
            add_signal(patch, kind, source)
        memory = _apply_if_corroborated(patch)
    return patch, memory


def add_signal(patch: ProposedPatch, kind: str, source: str | None = "") -> bool:
    """Record one signal for a pending patch; False when that signal (kind and source) is already there."""
    if kind not in SIGNAL_KINDS:
        raise ValidationFailed(f"signal kind must be one of {', '.join(SIGNAL_KINDS)}")
    source = (source or "")[:128]
    exists = db.session.scalar(
        select(ConsentSignal.id).where(
            ConsentSignal.patch_id == patch.id, ConsentSignal.kind == kind, ConsentSignal.source == source
        )
    )
    if exists is not None:
        return False
    db.session.add(ConsentSignal(patch_id=patch.id, kind=kind, source=source, created_at=utcnow()))
    db.session.flush()
    return True


def signal_kinds(patch_id: int) -> list[str]:
    """The patch's independent signals, by kind (a kind repeats once per distinct source)."""
    return list(
        db.session.scalars(
            select(ConsentSignal.kind).where(ConsentSignal.patch_id == patch_id).order_by(ConsentSignal.id)
        )
    )


def _apply_if_corroborated(patch: ProposedPatch) -> AgentMemory | None:
    kinds = signal_kinds(patch.id)
    if patch.policy != "signals" or len(kinds) < SIGNALS_NEEDED:
        return None
    if patch.op == "update" and not _is_active(patch.agent_id, patch.memory_id):
        _close(patch, "stale", "signals")
        _audit(patch, "consent_stale")
        return None
    memory = _apply(patch)
    _close(patch, "confirmed", "signals")
    patch.result_memory_id = memory.id
    _audit(patch, "consent_corroborated", signals=kinds, result_memory_id=memory.id)
    return memory


def _apply(patch: ProposedPatch, data: dict | None = None) -> AgentMemory:
    """The held write, through the mutation path, as the actor who proposed it."""
    changes = dict(patch.changes or {})
    actor = patch.proposed_by or AGENT_ACTOR
    if patch.op == "create":
        return create_memory(
            patch.agent_id,
            changes.pop("content"),
            actor=actor,
            data=data or {"patch_id": patch.id},
            **changes,
        )
    if patch.memory_id is None:  # never: an update names its memory, checked active before it is applied
        raise NotFound(f"patch {patch.id} names no memory to update")
    return update_memory(patch.agent_id, patch.memory_id, actor=actor, **changes)


def corroborate_from_insight(
    agent_id: int, field: str | None, confidence: float, insight_id: int
) -> int | None:
    """A theory-of-mind insight about a benign field, with confidence ≥ 0.8, is a signal for the one
    pending proposal on that field (several competing proposals: it cannot tell which, so none). A
    sensitive field is never corroborated: it needs the user's consent. Returns the patch id."""
    if not field or field in SENSITIVE_FIELDS or confidence < TOM_HIGH_CONFIDENCE:
        return None
    with atomic():
        expire_patches(agent_id)
        pending = db.session.scalars(
            select(ProposedPatch)
            .where(
                ProposedPatch.agent_id == agent_id,
                ProposedPatch.field == field,
                ProposedPatch.status == "pending",
                ProposedPatch.policy == "signals",
            )
            .limit(2)
            .with_for_update()
        ).all()
        if len(pending) != 1:
            return None
        add_signal(pending[0], "tom", str(insight_id))
        _apply_if_corroborated(pending[0])
    return pending[0].id


def _load(agent_id: int, patch_id: int, *, lock: bool = False) -> ProposedPatch:
    stmt = select(ProposedPatch).where(ProposedPatch.id == patch_id, ProposedPatch.agent_id == agent_id)
    patch = db.session.scalar(stmt.with_for_update() if lock else stmt)
    if patch is None:  # another agent's patch is reported like a missing one
        raise NotFound(f"patch {patch_id} not found")
    return patch


def _close(patch: ProposedPatch, status: str, decided_by: str | None = None) -> None:
    patch.status = status
    patch.decided_at = utcnow()
    patch.decided_by = decided_by
    patch.changes = None


def expire_patches(agent_id: int | None = None, now: datetime | None = None) -> int:
    """Close pending patches past their hold (dropping the proposed text); audited. Safe to re-run."""
    now = now or utcnow()
    with atomic():
        stmt = select(ProposedPatch).where(ProposedPatch.status == "pending", ProposedPatch.expires_at <= now)
        if agent_id is not None:
            stmt = stmt.where(ProposedPatch.agent_id == agent_id)
        lapsed = db.session.scalars(stmt.with_for_update()).all()
        for patch in lapsed:
            _close(patch, "expired")
            _audit(patch, "consent_expired")
    return len(lapsed)


def list_patches(agent_id: int, status: str | None = None, limit: int = 100) -> list[ProposedPatch]:
    expire_patches(agent_id)
    stmt = select(ProposedPatch).where(ProposedPatch.agent_id == agent_id)
    if status is not None:
        stmt = stmt.where(ProposedPatch.status == status)
    return list(db.session.scalars(stmt.order_by(ProposedPatch.id.desc()).limit(limit)))


def get_patch(agent_id: int, patch_id: int) -> ProposedPatch:
    expire_patches(agent_id)
    return _load(agent_id, patch_id)


def _turn(value: str | None, name: str) -> str | None:
    """A user-turn reference as the agent gives it: its own identifier of a chat message or UI event."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 128:
        raise ValidationFailed(f"{name} must be 1-128 characters naming the user's turn", field=name)
    return value.strip()


def confirm(
    agent_id: int,
    patch_id: int,
    source: str = "chat_ack",
    *,
    actor: str = AGENT_ACTOR,
    user_turn: str | None = None,
) -> ProposedPatch:
    """A person consented: apply the held write through the mutation path, in one transaction, with the
    acknowledgement on record.

    An admin (`admin:<id>`, in the console) confirms on their own authority. The agent relays the user's
    acknowledgement: `source` says how it was given (chat or a UI) and `user_turn` names the user's turn
    that gave it, which must not be the turn the write came from — the flow that proposed a change
    cannot also consent to it. On a benign (`signals`) patch the acknowledgement is a signal too."""
    if source not in CONSENT_SOURCES:
        raise ValidationFailed(f"consent source must be one of {', '.join(CONSENT_SOURCES)}", field="source")
    admin = is_admin(actor)
    if not admin and actor != AGENT_ACTOR:
        raise ValidationFailed("consent is given by a person: the agent relaying its user, or an admin")
    turn = _turn(user_turn, "user_turn")
    if not admin and turn is None:
        raise ValidationFailed(
            "user_turn is required: name the user's turn (message or UI event) that gave the acknowledgement",
            field="user_turn",
        )
    expire_patches(agent_id)
    stale = False
    with atomic():
        patch = _load(agent_id, patch_id, lock=True)
        if patch.status != "pending":
            raise PatchNotPending(f"patch {patch_id} is {patch.status}, not pending", status=patch.status)
        if not admin and patch.proposed_turn is not None and turn == patch.proposed_turn:
            raise ConsentFromProposingTurn(
                f"patch {patch_id} was proposed in turn {turn!r}; the user's acknowledgement must come from a "
                "later turn (ask the user, then confirm with the turn of their answer)"
            )
        how = "console" if admin else source
        acknowledgement = {"by": actor, "source": how, "user_turn": turn, "at": utcnow().isoformat()}
        if patch.policy == "signals":
            add_signal(patch, "ui" if admin else source, turn or actor)
        if patch.op == "update" and not _is_active(agent_id, patch.memory_id):
            stale = True
            _close(patch, "stale", how)
            _audit(patch, "consent_stale", acknowledgement=acknowledgement)
        else:
            memory = _apply(patch, {"patch_id": patch.id, "consent": how})
            _close(patch, "confirmed", how)
            patch.acknowledgement = acknowledgement
            patch.result_memory_id = memory.id
            _audit(
                patch,
                "consent_confirmed",
                source=how,
                result_memory_id=memory.id,
                acknowledgement=acknowledgement,
            )
    if stale:  # closed and committed above; the caller learns why nothing was applied
        raise PatchNotPending(
            f"patch {patch_id} targets memory #{patch.memory_id}, which is gone; the patch is closed",
            status="stale",
        )
    return patch


def _is_active(agent_id: int, memory_id: int | None) -> bool:
    return (
        memory_id is not None
        and db.session.scalar(
            select(AgentMemory.id).where(
                AgentMemory.id == memory_id,
                AgentMemory.agent_id == agent_id,
                AgentMemory.deleted_at.is_(None),
            )
        )
        is not None
    )


def reject(agent_id: int, patch_id: int, *, actor: str = AGENT_ACTOR) -> ProposedPatch:
    """The user (through the agent) or an admin declined: the held write is dropped, nothing else changes."""
    expire_patches(agent_id)
    with atomic():
        patch = _load(agent_id, patch_id, lock=True)
        if patch.status != "pending":
            raise PatchNotPending(f"patch {patch_id} is {patch.status}, not pending", status=patch.status)
        _close(patch, "rejected", "console" if is_admin(actor) else "agent")
        _audit(patch, "consent_rejected", by=actor)
    return patch


def applied_memory(agent_id: int, patch: ProposedPatch) -> AgentMemory | None:
    """The memory a confirmed patch created or changed."""
    if patch.result_memory_id is None:
        return None
    return db.session.scalar(
        select(AgentMemory).where(AgentMemory.id == patch.result_memory_id, AgentMemory.agent_id == agent_id)
    )
