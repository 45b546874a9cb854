"""The console's one glossary: every action name, session status, trigger, statistic and internal
label a page shows, in plain words. Templates never print a raw code name; they go through the
`plain` filter (or `term` for a word with its explanation), so the same thing is called the same
everywhere. An unknown code falls back to its words with underscores and hyphens as spaces.

docs/reference/console.md uses these words.
"""

from __future__ import annotations

from collections.abc import Mapping

# Audit actions (models/changes/: mutations.py, ttl.py, dedup.py, timemachine.py; jobs/*): what an operation did.
ACTIONS: Mapping[str, str] = {
    "create": "created",
    "import": "imported",
    "update": "edited",
    "delete": "deleted",
    "restore": "restored",
    "consolidate": "merged into one",
    "consolidate_source": "merged away",
    "protect": "locked (constitutional)",
    "unprotect": "unlocked",
    "dedup": "exact duplicate removed",
    "ttl_expire": "expired (TTL)",
    "purge": "purged",
    "rollback": "rolled back",
    "link": "related memories linked",
    "agent_settings": "settings changed",
    "refinement_requested": "refinement requested",
    "refinement_journal": "session journal written",
    "refinement_complete": "refinement finished",
    "refinement_consent": "consent asked",
    "refinement_consent_declined": "agent declined to refine",
    "mechanic_requested": "access requested",
    "mechanic_consented": "access granted by the agent",
    "mechanic_declined": "access declined by the agent",
    "mechanic_expired": "access expired",
    "mechanic_revoked": "access closed",
    "mechanic_view": "text viewed under a grant",
    "tom_run": "insights run",
    "reflection_run": "journal reflection run",
    "extraction_run": "fact extraction run",
    "update_resolution": "newer fact applied as an update",
    "consent_proposed": "user-context change held",
    "consent_confirmed": "held change applied with the user's consent",
    "consent_corroborated": "held change applied on two signals",
    "consent_rejected": "held change rejected",
    "consent_expired": "held change expired",
    "consent_stale": "held change closed (its memory is gone)",
}

STATUSES: Mapping[str, str] = {
    "queued": "queued",
    "running": "running",
    "completed": "completed",
    "incomplete": "stopped early",
    "terminated": "rolled back by the breaker",
    "partly_rolled_back": "terminated — partly rolled back",
    "not_rolled_back": "terminated — not rolled back",
    "rolled_back": "rolled back",
    "consent_declined": "agent declined",
    "skipped": "skipped",
    "failed": "failed",
    "interrupted": "interrupted",
    "pending": "waiting for the agent",
    "active": "active",
    "declined": "declined",
    "expired": "expired",
    "revoked": "revoked",
    "busy": "busy",
}

TRIGGERS: Mapping[str, str] = {
    "console": "an admin, in the console",
    "cli": "an admin, on the command line",
    "schedule": "the weekly sweep",
    "over_budget": "the over-budget scan",
    "consolidation": "daily consolidation",
    "demo": "the demo seed",
    "manual": "by hand",
    "test": "a test",
}

# Session statistics (models.history.session.STATS keys): short labels.
STATS: Mapping[str, str] = {
    "dedup_removed": "exact duplicates removed before the session",
    "dedup_tokens": "tokens those duplicates held",
    "consent_reason_chars": "length of the agent's stated reason (its words are not shown)",
    "consolidations": "merges",
    "consolidated": "memories merged away",
    "updated": "edits",
    "deleted": "deletions",
    "protected": "memories locked",
    "breaker_trips": "circuit-breaker rollbacks",
    "pairs_considered": "pairs considered",
    "pairs_checked": "pairs checked",
    "refused": "calls refused by a rule",
    "ledger_pages": "ledger pages",
    "ledger_pages_turned": "pages turned",
}

# Internal labels that reach a page: who decided, which model, which fields.
LABELS: Mapping[str, str] = {
    "offline": "built-in offline refiner",
    "offline-policy": "the built-in policy (no model configured)",
    "pre-consent": "the agent's standing consent",
    "hashed-bow (fallback)": "word-overlap fallback embeddings",
    "hashed-bow": "word-overlap fallback embeddings",
    "model": "the agent's model",
    "model-error": "no answer from the agent's model (a refusal)",
    "agent": "the agent",
    "core_token_budget": "core token budget",
    "min_retention": "minimum retention",
    "mechanic_preconsent": "standing consent to the Mechanic's Exception",
    "model_id": "model",
    "base_url": "model endpoint",
    "constitutional": "locked (constitutional)",
    "memory_type": "type",
    "token_estimate": "tokens",
}

# Words with their explanation, for the places a term is introduced (a title attribute, a legend).
TERMS: Mapping[str, str] = {
    "constitutional": "Locked: no agent, job or refinement may delete, merge or rewrite it; only an admin can unlock it.",
    "core": "Core memories go into the agent's prompt and count against its token budget.",
    "budget": "The most core tokens the agent should carry; over it, refinement is scheduled.",
    "retention": "A session that leaves less than this share of its starting core is rolled back whole.",
    "dedup": "Content-blind dedup removes exact duplicates (same normalised text hash) before each session.",
    "grant": "A Mechanic's grant: time-limited, consented access to an agent's memory text.",
}

_TABLES = (ACTIONS, STATUSES, TRIGGERS, STATS, LABELS)


def plain(code: object) -> str:
    """Plain words for a code name from any table above; unknown codes read as words."""
    if code is None:
        return "—"
    text = str(code)
    for table in _TABLES:
        if text in table:
            return table[text]
    return text.replace("_", " ").replace("-", " ")


def action(code: str) -> str:
    return ACTIONS.get(code) or plain(code)


def status(code: str) -> str:
    return STATUSES.get(code) or plain(code)


def stat(code: str) -> str:
    return STATS.get(code) or plain(code)


def term(word: str) -> str:
    """The explanation of a glossary term (for a title or a footnote)."""
    return TERMS.get(word, "")
