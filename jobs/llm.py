"""One small interface over the agent's model: the openai SDK against any OpenAI-compatible endpoint,
or the built-in `offline` refiner when the agent has no model (or LLM_OFFLINE=1).

Both return the same `Turn`, so the refinement loop, its tools and its guards are identical.
"""

from __future__ import annotations

import json
from typing import Any

from flask import current_app

from models import Agent

from .chat import ChatModel, ToolCall, Turn
from .offline import OfflineRefiner


class OpenAIChatModel:
    """The agent's own model through the openai SDK (OpenRouter, vLLM, Ollama, OpenAI ...).

    The SDK retries 408/409/429/5xx and connection errors with exponential backoff, honouring
    Retry-After; `max_retries` bounds it.
    """

    def __init__(
        self, model_id: str, base_url: str | None, api_key: str | None, timeout: float, max_retries: int
    ):
        import openai

        self.label = model_id
        self.model_id = model_id
        self.client = openai.OpenAI(
            base_url=base_url or None,
            # Local servers (Ollama, vLLM) need no key, but the SDK insists on one.
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    def turn(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None = None,
    ) -> Turn:
        kwargs: dict[str, Any] = {"model": self.model_id, "messages": messages, "temperature": 0}
        if tools:
            kwargs["tools"] = tools
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        response = self.client.chat.completions.create(**kwargs)
        choice = response.choices[0].message
        usage = response.usage
        cached = 0
        if usage is not None and getattr(usage, "prompt_tokens_details", None) is not None:
            cached = usage.prompt_tokens_details.cached_tokens or 0
        return Turn(
            content=choice.content,
            tool_calls=[
                ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
                for c in (choice.tool_calls or [])
                if getattr(c, "function", None) is not None
            ],
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
            cached_tokens=cached,
        )


class ModelNotConfigured(Exception):
    """The agent names a model but no endpoint to reach it on. The message names the missing setting and
    holds no memory text, so it is recorded on the session as it is."""


def runs_offline(agent: Agent) -> bool:
    """The offline refiner stands in only when no model is set for the agent, or LLM_OFFLINE=1 says so."""
    return bool(current_app.config.get("LLM_OFFLINE")) or not agent.model_id


def _endpoint(agent: Agent) -> str | None:
    config = current_app.config
    return agent.base_url or config["OPENAI_BASE_URL"] or config["OPENAI_API_KEY"]


def model_configured(agent: Agent) -> bool:
    """A model can be called: the agent names one, an endpoint is configured, and LLM_OFFLINE is off."""
    return not runs_offline(agent) and bool(_endpoint(agent))


def missing_endpoint(agent: Agent) -> str | None:
    """Why the agent's model cannot be called (the ModelNotConfigured message, naming the setting), or None.

    None also when the agent runs offline: background jobs use this to tell "no model, so the offline
    policy applies" apart from "a model that cannot be reached", which they report instead of quietly
    running offline."""
    if runs_offline(agent) or _endpoint(agent):
        return None
    return _not_configured(agent)


def _not_configured(agent: Agent) -> str:
    return (
        f"agent {agent.name!r} names model {agent.model_id!r} but no endpoint to call it on: set "
        "OPENAI_BASE_URL (or the agent's base_url), or OPENAI_API_KEY for api.openai.com; "
        "LLM_OFFLINE=1 runs the offline refiner instead"
    )


def json_object(turn: Turn) -> dict | None:
    """The first JSON object in a model's answer (models wrap JSON in prose or code fences)."""
    text = turn.content or ""
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def model_for(agent: Agent) -> ChatModel:
    """The chat model a session of this agent talks to: its own model, or the offline refiner when it has
    none (or LLM_OFFLINE=1). A model without an endpoint is ModelNotConfigured, never a silent offline run:
    the admin would believe the agent's model had refined it."""
    if runs_offline(agent) or not agent.model_id:  # runs_offline() says so too; this tells mypy
        return OfflineRefiner(agent.id)
    if not _endpoint(agent):
        raise ModelNotConfigured(_not_configured(agent))
    return OpenAIChatModel(
        agent.model_id,
        base_url=agent.base_url or current_app.config["OPENAI_BASE_URL"],
        api_key=current_app.config["OPENAI_API_KEY"],
        timeout=float(current_app.config["LLM_TIMEOUT"]),
        max_retries=int(current_app.config["LLM_MAX_RETRIES"]),
    )


def parse_consent(turn: Turn) -> tuple[bool, str]:
    """Read a consent answer: a JSON object {"consent": bool, "reason": str}, or a plain yes/no.

    Anything unclear is a refusal: consent must be explicit.
    """
    text = (turn.content or "").strip()
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            value = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("consent"), bool):
            reason = value.get("reason")
            return value["consent"], str(reason)[:300] if reason else ""
    first = text.lower().lstrip("\"'* ").split(maxsplit=1)[0].strip(".,!:") if text else ""
    if first in {"yes", "consent", "agreed", "i consent"}:
        return True, ""
    return False, "no explicit consent in the answer"
