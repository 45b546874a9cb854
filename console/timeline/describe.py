"""Words for audit records: who did it and what it did, from metadata only.

Audit `data` is free-form (some callers put an agent's own words there, e.g. a deletion reason),
so only known keys with the expected value types are described; anything else is left out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from console.web import glossary
from console.web.filters import when
from models import Agent, User
from models.changes.rules import EDITABLE_FIELDS
from models.readmodels.timeline import TimelineOp

SETTINGS = ("core_token_budget", "min_retention", "mechanic_preconsent", "model_id", "base_url")
WORDS = {"trigger", "status", "scope", "decided_by"}


def actor_label(actor: str, users: dict[int, User], agent: Agent | None) -> str:
    kind, _, who = actor.partition(":")
    if kind == "admin":
        if who.isdigit() and int(who) in users:
            return users[int(who)].email
        return f"admin ({who})" if who else "admin"
    if actor == "agent":
        return f"agent {agent.name}" if agent else "the agent"
    if kind == "system":
        return f"system · {who}"
    return "unknown actor"


def admin_ids(ops: list[TimelineOp]) -> set[int]:
    ids = set()
    for op in ops:
        kind, _, who = op.actor.partition(":")
        if kind == "admin" and who.isdigit():
            ids.add(int(who))
    return ids


def _ids(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        return value
    return None


def _word(value: Any) -> str | None:
    if (
        isinstance(value, str)
        and len(value) <= 40
        and value.replace("-", "").replace("_", "").replace(" ", "").isalnum()
    ):
        return value
    return None


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "none"
    if isinstance(value, int | float):
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    return None


def _rollback(scope: Any) -> str | None:
    if not isinstance(scope, dict):
        return None
    kind = scope.get("rollback_of")
    if kind == "operation" and isinstance(scope.get("target_op_id"), str):
        return "undid one earlier operation"
    if kind == "session" and isinstance(scope.get("session_id"), int):
        return f"undid refinement session #{scope['session_id']}"
    if kind == "point_in_time" and isinstance(scope.get("to"), str):
        return f"restored the agent to {scope['to'][:19].replace('T', ' ')} UTC"
    return None


def details(op: TimelineOp) -> list[str]:
    """Short metadata phrases for an operation (deduplicated, in record order)."""
    out: list[str] = []
    hashes: list[str] = []

    def add(text: str | None) -> None:
        if text and text not in out:
            out.append(text)

    for record in op.records:
        data = record.data if isinstance(record.data, dict) else {}
        if isinstance(data.get("merged_into"), int):
            add(f"#{record.memory_id} merged into #{data['merged_into']}")
        merged = _ids(data.get("merged_from"))
        if merged:
            add("merged from " + ", ".join(f"#{i}" for i in merged))
        fields = data.get("fields")
        if isinstance(fields, list) and all(f in EDITABLE_FIELDS for f in fields):
            add("changed " + ", ".join(fields))
        add(_rollback(data.get("rollback_of")))
        if record.action == "agent_settings":
            before, after = data.get("before") or {}, data.get("after") or {}
            for key in SETTINGS:
                if key in after and isinstance(after, dict) and isinstance(before, dict):
                    old, new = _scalar(before.get(key)), _scalar(after.get(key))
                    shown = (old, new) if old is not None and new is not None else ("…", "changed")
                    add(f"{glossary.plain(key)}: {shown[0]} → {shown[1]}")
            if isinstance(after, dict) and "refinement_prompt" in after:
                add("refinement prompt changed (its text is the agent's own and is not shown)")
        if isinstance(data.get("grant_id"), int):
            add(f"grant #{data['grant_id']}")
        consent = record.action == "refinement_consent" and isinstance(data.get("consent"), bool)
        if consent:  # who answered, and the answer: "decided by: policy" alone left the answer out
            who = (
                "the built-in policy (no model configured)"
                if data.get("decided_by") == "policy"
                else "the agent"
            )
            add(f"{who} answered {'yes' if data['consent'] else 'no'}")
        for key in WORDS:
            if consent and key == "decided_by":
                continue
            word = _word(data.get(key))
            if word:
                add(f"{key.replace('_', ' ')}: {glossary.plain(word)}")
        for key in ("minutes", "ids", "memories", "ops", "summary_chars"):
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                label = {
                    "summary_chars": "summary length (not shown)",
                    "memories": "memories shown",
                    "ids": "ids in scope",
                    "ops": "operations",
                }.get(key, key)
                add(f"{label}: {value:,}")
        stats = data.get("stats")
        if isinstance(stats, dict):
            counts = [
                f"{glossary.stat(k)}: {v:,}"
                for k, v in stats.items()
                if _word(k) and isinstance(v, int) and not isinstance(v, bool)
            ]
            for count in counts:
                add(count)
        if data.get("content_redacted") is True:
            add("text redacted by purge")
        digest = data.get("content_hash")
        if isinstance(digest, str) and all(c in "0123456789abcdef" for c in digest):
            hashes.append(digest[:12])
    if hashes:  # a dedup can remove hundreds of rows: name a few hashes, count the rest
        shown = ", ".join(hashes[:3])
        add(
            f"content hash{'es' if len(hashes) > 1 else ''} {shown}"
            + (f" +{len(hashes) - 3} more" if len(hashes) > 3 else "")
        )
    return out


def operation_title(action: str, data: Any, created_at: datetime) -> str:
    """The rollback dialog's heading for one operation, in words: what it did and when (never its hash)."""
    at = when(created_at)
    scope = data.get("rollback_of") if isinstance(data, dict) else None
    if action == "rollback":
        undid = _rollback(scope)
        return f"Undo the rollback of {at}" + (f" (it {undid})" if undid else "")
    return f"Roll back “{glossary.action(action)}” of {at}"
