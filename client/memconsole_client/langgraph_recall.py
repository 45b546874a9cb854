"""On-demand recall as a LangGraph node (extra `memconsole-client[langgraph]`; docs/reference/client.md,
"Recall when unsure").

`RecallNode(client)` reads the turn's confidence from the graph state and recalls (memory.query) only
when it is below the threshold: it writes `{"recalled": bool, "memories": [texts], "turns": n,
"recalls": n, "share": x}` to one state key, so the model node can use the memories and the agent can
read its own counts. Every turn is noted on the console (POST /turns) for the share of turns that recall.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from .client import Client
from .recall import DEFAULT_RECALL_THRESHOLD


def _last_text(state: dict[str, Any]) -> str:
    messages = state.get("messages") or []
    if not messages:
        return ""
    last = messages[-1]
    content = last.content if isinstance(last, BaseMessage) else last.get("content", "")
    return content if isinstance(content, str) else " ".join(str(part) for part in content)


class RecallNode:
    """A graph node: `graph.add_node("recall", RecallNode(client))`, between the node that rates the
    agent's confidence and the model node.

    `confidence_key` names the state key holding a number from 0 to 1; the query is `state[query_key]`,
    or the last message's text when `query_key` is None; the answer goes to `state[output_key]`."""

    def __init__(
        self,
        client: Client,
        *,
        threshold: float = DEFAULT_RECALL_THRESHOLD,
        confidence_key: str = "confidence",
        query_key: str | None = None,
        output_key: str = "recall",
        thread_id_key: str | None = None,
        **query_args: Any,
    ) -> None:
        self.client = client
        self.threshold = threshold
        self.confidence_key = confidence_key
        self.query_key = query_key
        self.output_key = output_key
        self.thread_id_key = thread_id_key
        self.query_args = query_args

    def __call__(self, state: dict[str, Any]) -> dict[str, Any]:
        query = state[self.query_key] if self.query_key else _last_text(state)
        thread_id = state.get(self.thread_id_key) if self.thread_id_key else None
        turn = self.client.recall(
            query,
            confidence=state[self.confidence_key],
            threshold=self.threshold,
            thread_id=thread_id,
            **self.query_args,
        )
        return {
            self.output_key: {
                "recalled": turn.recalled,
                "memories": turn.texts,
                "turns": turn.turns,
                "recalls": turn.recalls,
                "share": turn.share,
            }
        }


__all__ = ["RecallNode"]
