"""The built-in `offline` refiner: a deterministic de-duplication policy that drives the same tools.

It merges only memories that state the same fact in the same words: equal after normalising case,
punctuation, spacing, typographic quotes, "&", and contractions, or equal apart from articles
(a, an, the) — and never two texts whose numbers, dates, names or negations differ. Everything else
is left alone; zero operations is its usual answer. The rule itself is `jobs/samefact.py`, which is
also the offline policy of the daily consolidation job.
"""

from __future__ import annotations

import json
from typing import Any

from models import Agent, AgentMemory, db
from models.refinement.toolbox import HARD_CAP
from models.refinement.tools import MAX_IDS_PER_CALL

from .chat import OFFLINE_LABEL, ToolCall, Turn
from .samefact import duplicate_groups


class OfflineRefiner:
    """Answers like a model: consents, then consolidates true duplicates, then completes."""

    label = OFFLINE_LABEL

    def __init__(self, agent_id: int) -> None:
        self.agent_id = agent_id
        self._plan: list[list[AgentMemory]] | None = None

    def _planned(self) -> list[list[AgentMemory]]:
        """Duplicate groups to merge, within the hard cap and never past the circuit breaker's threshold."""
        if self._plan is None:
            memories = list(db.session.scalars(AgentMemory.active_core(self.agent_id)).all())
            threshold = db.session.get_one(Agent, self.agent_id).min_retention
            tokens = sum(m.token_estimate for m in memories)
            count = len(memories)
            floor_tokens, floor_count = threshold * tokens, threshold * count
            plan: list[list[AgentMemory]] = []
            for group in duplicate_groups(memories):
                for chunk in (
                    group[i : i + MAX_IDS_PER_CALL] for i in range(0, len(group), MAX_IDS_PER_CALL)
                ):
                    # Shrink a merge that would cut past the threshold; the rest waits for a later session.
                    while len(chunk) >= 2 and (
                        tokens - sum(m.token_estimate for m in chunk[1:]) < floor_tokens
                        or count - (len(chunk) - 1) < floor_count
                    ):
                        chunk = chunk[:-1]
                    if len(chunk) < 2 or len(plan) >= HARD_CAP:
                        continue
                    removed_tokens = sum(m.token_estimate for m in chunk[1:])
                    plan.append(chunk)
                    tokens -= removed_tokens
                    count -= len(chunk) - 1
            self._plan = plan
        return self._plan

    def turn(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None = None,
    ) -> Turn:
        if not tools:  # the consent step
            return Turn(
                content=json.dumps(
                    {"consent": True, "reason": "Offline policy: exact and near-exact duplicates only."}
                )
            )
        plan = self._planned()
        answered = [m for m in messages if m.get("role") == "tool"]
        if not answered and plan:
            return Turn(
                content=None,
                tool_calls=[
                    ToolCall(
                        id=f"offline-{i}",
                        name="consolidate_memories",
                        arguments=json.dumps({"ids": [m.id for m in group], "new_content": group[0].content}),
                    )
                    for i, group in enumerate(plan)
                ],
            )
        merged = [g for g, m in zip(plan, answered, strict=False) if json.loads(m["content"]).get("ok")]
        if merged:
            sources = sum(len(g) for g in merged)
            saved = sum(m.token_estimate for g in merged for m in g[1:])
            summary = (
                f"Offline refiner: consolidated {len(merged)} duplicate group(s), {sources} → {len(merged)} memories; "
                f"saved ~{saved} tokens."
            )
        else:
            summary = "Offline refiner: no true duplicates found; zero operations."
        return Turn(
            content=None,
            tool_calls=[
                ToolCall(
                    id="offline-complete",
                    name="complete_refinement",
                    arguments=json.dumps({"summary": summary}),
                )
            ],
        )
