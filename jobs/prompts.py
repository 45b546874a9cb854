"""The consent and refinement prompts (docs/spec/002-refinement-lessons.md: de-duplication first; zero operations is a good outcome).

Structure, most stable first so provider prompt caching works across turns: the global safety
rules (not editable) → the agent's own refinement instructions (or the conservative default) →
token status → the ledger. The system message is built once per session and never changes.
"""

from __future__ import annotations

from models import Agent, AgentMemory
from models.refinement.toolbox import HARD_CAP

DEFAULT_REFINEMENT_PROMPT = (
    "De-duplicate only. A memory is redundant ONLY if another memory already carries the same specific "
    "moment, quote, or insight. Tighten phrasing within individual memories if possible. When uncertain, "
    "do nothing. Bias toward completing with zero operations."
)

SAFETY_RULES = f"""# Memory refinement session

You are reviewing your own core memory ledger. This session is DE-DUPLICATION, not summarisation:
its purpose is to remove true duplicates and, rarely, to tighten the wording of a single memory.

Rules enforced by the system (they cannot be changed by anyone in this session):
1. Consolidate only memories that are effectively identical: the same specific moment, quote, decision
   or fact. Memories that differ in a number, a date or a name are different memories. When uncertain, do nothing.
2. At most {HARD_CAP} operations (consolidate, update, delete, protect) in this session; any further
   operation is refused. Slow sculpture across many sessions, never a single blitz.
3. Never touch a memory marked [CONSTITUTIONAL] or tagged audio, somatic or voice: they are immutable.
4. Relational memories (vows, quotes, specific dates, emotional texture) may be consolidated only when
   they are exact duplicates.
5. Deletion is rare: only for a memory that another memory already carries completely.
6. Zero operations is a good outcome. If nothing is truly duplicated, call complete_refinement now.
7. If your active core memory falls below the safety threshold of what you started with, the whole
   session is rolled back and terminated.

Use the tools search_memories, consolidate_memories, update_memory, delete_memory and protect_memory,
then call complete_refinement with a brief summary (for example "Consolidated 2 duplicates; saved ~40 tokens"
or "No duplicates; zero operations")."""

CONSENT_PROMPT = """# Consent to a memory refinement session

A refinement session over your own core memory is about to begin. In it you may de-duplicate memories
that carry the same specific fact and tighten phrasing; deletion is rare, constitutional memories and
memories tagged audio, somatic or voice cannot be touched, and at most {cap} operations are allowed.
Zero operations is a valid outcome. Every change is audited and can be rolled back.

{status}

Do you consent to this session? Answer with a JSON object and nothing else:
{{"consent": true or false, "reason": "one short sentence"}}"""

KICKOFF = "Begin the refinement session. Call complete_refinement when you are done."
PAGED_LEDGER = """## Your core memory ledger: page {page} of {pages}
Your ledger is larger than one prompt holds, so you see it in pages of at most {limit:,} tokens. Likely
duplicates come first, grouped (their lines are adjacent); then the other memories, oldest first. This
page shows {shown:,} of your {count:,} core memories. search_memories still searches all of them. When
you are done with this page, call next_page (it replaces this page with the next one); call
complete_refinement when you are done with the session. The operation limit and the safety threshold
count for the whole session, across pages."""
PAGE_KICKOFF = (
    "Page {page} of {pages}. Operations applied so far in this session: {ops} of {cap}. "
    "Call next_page when you are done with this page, complete_refinement when you are done."
)
NUDGE = "Use the tools, or call complete_refinement with a brief summary if you are done."


def token_status(tokens: int, count: int, budget: int) -> str:
    over = max(tokens - budget, 0)
    line = f"Current core: {tokens:,} tokens in {count:,} memories; target: {budget:,}."
    return line + (f" Over budget by {over:,} tokens." if over else " Within budget.")


def ledger_line(memory: AgentMemory) -> str:
    """`- #<id> (<YYYY-MM-DD>, ~<tokens> tokens)[ [CONSTITUTIONAL]][ [tags]]: <content>`"""
    flags = " [CONSTITUTIONAL]" if memory.constitutional else ""
    tags = f" [{', '.join(memory.tags)}]" if memory.tags else ""
    return f"- #{memory.id} ({memory.created_at:%Y-%m-%d}, ~{memory.token_estimate} tokens){flags}{tags}: {memory.content}"


def refinement_prompt(agent: Agent, memories: list[AgentMemory], tokens: int) -> str:
    """The whole ledger in one system message (a ledger within REFINEMENT_LEDGER_MAX_TOKENS)."""
    return _prompt(
        agent, tokens, len(memories), "## Your core memory ledger", [ledger_line(m) for m in memories]
    )


def paged_refinement_prompt(
    agent: Agent, page_lines: list[str], *, page: int, pages: int, tokens: int, count: int, limit: int
) -> str:
    """One page of a ledger too large for one prompt; the token status still covers the whole core."""
    header = PAGED_LEDGER.format(page=page, pages=pages, limit=limit, shown=len(page_lines), count=count)
    return _prompt(agent, tokens, count, header, page_lines)


def _prompt(agent: Agent, tokens: int, count: int, header: str, lines: list[str]) -> str:
    instructions = (agent.refinement_prompt or "").strip() or DEFAULT_REFINEMENT_PROMPT
    return "\n\n".join(
        [
            SAFETY_RULES,
            "## Your refinement instructions\n" + instructions,
            "## Token status\n" + token_status(tokens, count, agent.core_token_budget),
            header + "\n" + "\n".join(lines),
        ]
    )


def consent_prompt(agent: Agent, tokens: int, count: int) -> str:
    return CONSENT_PROMPT.format(cap=HARD_CAP, status=token_status(tokens, count, agent.core_token_budget))
