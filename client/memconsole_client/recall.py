"""On-demand recall (docs/spec/003-memory-system.md §11; docs/reference/client.md, "Recall when unsure"):
memory.query only on the turns where the agent is unsure, and the count of turns and recalls.

The context block already carries the agent's core memories into every prompt; recall is the safety
valve for the rare turn it misses. The caller gives its confidence (0 to 1) that it can answer from what
it already has; below `threshold` the turn recalls (`memory.query` with `top_k=3` and a small token
budget, the shape §11 names), otherwise it goes on without. Either way the turn is noted
(POST /turns), so GET /agent's `recall` and the console's agent page show the share of turns that
recalled; §11's goal is under 10%. The client keeps the same counts for this process (`recall_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import models as m

# Where to start: recall when the agent is less than 30% sure. Tune it with the share GET /agent
# reports (docs/reference/client.md, "Recall when unsure"): above 10% of turns, lower it; answers that missed
# a fact the agent held, raise it.
DEFAULT_RECALL_THRESHOLD = 0.3
RECALL_TOP_K = 3
RECALL_BUDGET_TOKENS = 300


@dataclass
class RecallCounts:
    """Turns seen by this client's recall helper and how many of them recalled."""

    turns: int = 0
    recalls: int = 0

    @property
    def share(self) -> float | None:
        return self.recalls / self.turns if self.turns else None

    def count(self, recalled: bool) -> None:
        self.turns += 1
        self.recalls += int(recalled)


@dataclass(frozen=True)
class Recall:
    """One turn's decision: whether it recalled, what memory.query returned (None when it did not), and
    this client's counts after the turn."""

    recalled: bool
    result: m.QueryResult | None
    turns: int
    recalls: int
    share: float | None = field(default=None)

    @property
    def texts(self) -> list[str]:
        """The recalled memories' texts, best first (empty when the turn did not recall)."""
        if self.result is None:
            return []
        return [r.text if isinstance(r, m.Bullet) else r.content for r in self.result.results]


def should_recall(confidence: float, threshold: float) -> bool:
    """True when `confidence` is below `threshold`; both are numbers from 0 to 1."""
    for name, value in (("confidence", confidence), ("threshold", threshold)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be a number from 0 to 1, not {value!r}")
    return confidence < threshold


def outcome(counts: RecallCounts, recalled: bool, result: m.QueryResult | None) -> Recall:
    counts.count(recalled)
    return Recall(recalled, result, counts.turns, counts.recalls, counts.share)


__all__ = [
    "DEFAULT_RECALL_THRESHOLD",
    "RECALL_BUDGET_TOKENS",
    "RECALL_TOP_K",
    "Recall",
    "RecallCounts",
    "should_recall",
]
