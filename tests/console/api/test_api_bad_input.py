"""Invariant 10 for the agent API: bad input on every endpoint gets a clear 4xx JSON error and
changes nothing; hostile-looking but valid text is stored and searched as plain text."""

from __future__ import annotations

import json
import unicodedata

import pytest

from models import db
from models.changes.mutations import create_memory
from models.changes.patches import propose
from tests.api_support import bearer, table_state

LONG = "x" * 10_001
SQL = "'; DROP TABLE agent_memories; --"
MEMORY, PATCH = "/api/v1/memory/{memory_id}", "/api/v1/patches/{patch_id}"

# (method, path, body or raw bytes, extra request options, expected status)
BODY_CASES = {
    "create: missing content": ("POST", "/api/v1/memory", {"category": "tasks"}, 422),
    "create: missing category": ("POST", "/api/v1/memory", {"content": "The user likes tea."}, 422),
    "create: 10,001 characters": (
        "POST",
        "/api/v1/memory",
        {"content": LONG, "category": "tasks", "memory_type": "core"},
        422,
    ),
    "create: content is a number": ("POST", "/api/v1/memory", {"content": 5, "category": "tasks"}, 422),
    "create: content is a list": ("POST", "/api/v1/memory", {"content": ["a"], "category": "tasks"}, 422),
    "create: importance as text": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "importance": "3"},
        422,
    ),
    "create: importance out of range": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "importance": 6},
        422,
    ),
    "create: pinned as text": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "pinned": "true"},
        422,
    ),
    "create: unknown memory type": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "memory_type": "dream"},
        422,
    ),
    "create: unknown field": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "agent_id": 2},
        422,
    ),
    "create: NUL in content": (
        "POST",
        "/api/v1/memory",
        {"content": "The user\x00 naps.", "category": "tasks"},
        422,
    ),
    "create: SQL in the category": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": SQL},
        422,
    ),
    "create: unicode category": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tâches"},
        422,
    ),
    "create: tags not a list": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "tags": "a,b"},
        422,
    ),
    "create: 33 tags": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "tags": [f"t{i}" for i in range(33)]},
        422,
    ),
    "create: blank tag": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "tags": ["   "]},
        422,
    ),
    "create: disallowed category": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tone"},
        403,
    ),
    "create: constitutional": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "constitutional": True},
        409,
    ),
    "create: whitespace only": (
        "POST",
        "/api/v1/memory",
        {"content": "\u200b\u00a0 \n", "category": "tasks"},
        422,
    ),
    "create: field with capitals": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "field": "City"},
        422,
    ),
    "create: user_id too long": (
        "POST",
        "/api/v1/memory",
        {"content": "The user naps.", "category": "tasks", "user_id": "u" * 129},
        422,
    ),
    "update: nothing": ("PATCH", MEMORY, {}, 422),
    "update: only a field name": ("PATCH", MEMORY, {"field": "tone"}, 422),
    "update: content null": ("PATCH", MEMORY, {"content": None}, 422),
    "update: 10,001 characters": ("PATCH", MEMORY, {"content": LONG}, 422),
    "update: importance as text": ("PATCH", MEMORY, {"importance": "high"}, 422),
    "update: pronouns": ("PATCH", MEMORY, {"content": "You told me about tasks."}, 422),
    "update: category null": ("PATCH", MEMORY, {"category": None}, 422),
    "update: disallowed category": ("PATCH", MEMORY, {"category": "tone"}, 403),
    "update: type whose rules the text breaks": ("PATCH", MEMORY, {"memory_type": "procedural"}, 422),
    "query: top_k 0": ("POST", "/api/v1/memory/query", {"top_k": 0}, 422),
    "query: top_k 51": ("POST", "/api/v1/memory/query", {"top_k": 51}, 422),
    "query: top_k as text": ("POST", "/api/v1/memory/query", {"top_k": "5"}, 422),
    "query: top_k as float": ("POST", "/api/v1/memory/query", {"top_k": 5.5}, 422),
    "query: budget 0": ("POST", "/api/v1/memory/query", {"budget_tokens": 0}, 422),
    "query: unknown return": ("POST", "/api/v1/memory/query", {"return": "xml"}, 422),
    "query: threshold above 1": ("POST", "/api/v1/memory/query", {"threshold": 2}, 422),
    "query: categories as text": ("POST", "/api/v1/memory/query", {"categories": "tasks"}, 422),
    "query: SQL category": ("POST", "/api/v1/memory/query", {"categories": [SQL]}, 422),
    "query: filters as list": ("POST", "/api/v1/memory/query", {"filters": ["user_id"]}, 422),
    "query: unknown filter": ("POST", "/api/v1/memory/query", {"filters": {"content": "x"}}, 422),
    "query: importance_min 0": ("POST", "/api/v1/memory/query", {"filters": {"importance_min": 0}}, 422),
    "query: bad date": ("POST", "/api/v1/memory/query", {"filters": {"updated_after": "yesterday"}}, 422),
    "query: pinned as text": ("POST", "/api/v1/memory/query", {"filters": {"pinned": "false"}}, 422),
    "query: negative since_rev": ("POST", "/api/v1/memory/query", {"thread_id": "t", "since_rev": -1}, 422),
    "query: 1,001-character query": ("POST", "/api/v1/memory/query", {"query": "q" * 1001}, 422),
    "query: NUL in user_id": ("POST", "/api/v1/memory/query", {"filters": {"user_id": "a\x00b"}}, 422),
    "query: another agent id": ("POST", "/api/v1/memory/query", {"filters": {"agent_id": 999}}, 403),
    "prompt: number": ("PUT", "/api/v1/agent/refinement-prompt", {"refinement_prompt": 5}, 422),
    "prompt: missing": ("PUT", "/api/v1/agent/refinement-prompt", {}, 422),
    "prompt: 4,001 characters": (
        "PUT",
        "/api/v1/agent/refinement-prompt",
        {"refinement_prompt": "p" * 4001},
        422,
    ),
    "preconsent: text": ("PUT", "/api/v1/agent/mechanic-preconsent", {"preconsent": "true"}, 422),
    "preconsent: number": ("PUT", "/api/v1/agent/mechanic-preconsent", {"preconsent": 1}, 422),
    "preconsent: missing": ("PUT", "/api/v1/agent/mechanic-preconsent", {}, 422),
    "checkpoint: data is a list": ("PUT", "/api/v1/checkpoints/t1", {"checkpoint_data": [1, 2]}, 422),
    "checkpoint: data missing": ("PUT", "/api/v1/checkpoints/t1", {"user_id": "u1"}, 422),
    "checkpoint: user_id too long": (
        "PUT",
        "/api/v1/checkpoints/t1",
        {"user_id": "u" * 129, "checkpoint_data": {}},
        422,
    ),
    "checkpoint: infinite number": (
        "PUT",
        "/api/v1/checkpoints/t1",
        b'{"checkpoint_data": {"x": 1e400}}',
        422,
    ),
    "checkpoint: thread id too long": (
        "PUT",
        "/api/v1/checkpoints/" + "t" * 129,
        {"checkpoint_data": {}},
        422,
    ),
    "confirm: unknown source": ("POST", PATCH + "/confirm", {"source": "email", "user_turn": "m2"}, 422),
    "confirm: no user turn": ("POST", PATCH + "/confirm", {"source": "chat_ack"}, 422),
    "confirm: user turn too long": ("POST", PATCH + "/confirm", {"user_turn": "m" * 129}, 422),
}
RAW_CASES = {
    "not JSON": (b"content=hello", "application/json", 400),
    "truncated JSON": (b'{"content": "The user', "application/json", 400),
    "lone surrogate": (b'{"content": "\\ud800", "category": "tasks"}', "application/json", 400),
    "invalid UTF-8": (b'{"content": "\xff\xfe", "category": "tasks"}', "application/json", 400),
    "JSON array": (b'[{"content": "The user naps."}]', "application/json", 422),
    "JSON null": (b"null", "application/json", 422),
    "form encoded": (
        b'{"content": "The user naps.", "category": "tasks"}',
        "application/x-www-form-urlencoded",
        415,
    ),
    "deep nesting": (b'{"checkpoint_data": ' + b'{"a":' * 5000 + b"1" + b"}" * 5001, "application/json", 400),
    "empty body": (b"", "application/json", 400),
}
ARG_CASES = {
    "history: limit 0": ("/api/v1/memory/{memory_id}/history?limit=0", 422),
    "history: limit 201": ("/api/v1/memory/{memory_id}/history?limit=201", 422),
    "history: limit as words": ("/api/v1/memory/{memory_id}/history?limit=ten", 422),
    "history: unknown parameter": ("/api/v1/memory/{memory_id}/history?order=asc", 422),
    "export: no user": ("/api/v1/export", 422),
    "export: empty user": ("/api/v1/export?user_id=", 422),
    "export: NUL in user": ("/api/v1/export?user_id=a%00b", 422),
    "patches: unknown status": ("/api/v1/patches?status=maybe", 422),
    "checkpoint: NUL in user": ("/api/v1/checkpoints/t1?user_id=%00", 422),
    "memory id 0": ("/api/v1/memory/0", 404),
    "memory id beyond 32 bits": ("/api/v1/memory/99999999999", 404),
    "memory id not a number": ("/api/v1/memory/abc", 404),
    "negative memory id": ("/api/v1/memory/-1", 404),
    "SQL memory id": ("/api/v1/memory/1%20OR%201=1", 404),
    "unknown endpoint": ("/api/v1/memories", 404),
}


@pytest.fixture
def world(app, make_agent):
    """An executor with one memory and one pending patch, and the state of every table."""
    app.config["API_FLUSH_SECONDS"] = 3600
    agent = make_agent(role="executor")
    headers = bearer(agent)
    memory = create_memory(agent.id, "The user files taxes in April.", actor="agent", memory_type="semantic",
                           category="tasks", thread_id="t1")  # fmt: skip
    patch = propose(agent.id, "create", "city", {"content": "The user lives in Oslo.", "category": "tasks"})
    ids = {"memory_id": memory.id, "patch_id": patch.id}
    return headers, ids


def _assert_clear_error(response, status):
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    assert response.is_json
    payload = response.get_json()
    assert isinstance(payload["error"], str) and payload["error"]
    assert isinstance(payload["message"], str) and payload["message"]
    return payload


@pytest.mark.parametrize("case", list(BODY_CASES), ids=list(BODY_CASES))
def test_bad_body_gets_a_clear_4xx_and_changes_nothing(client, world, case):
    headers, ids = world
    method, path, body, status = BODY_CASES[case]
    before = table_state()
    if isinstance(body, bytes):
        response = client.open(
            path.format(**ids), method=method, data=body, content_type="application/json", headers=headers
        )
    else:
        response = client.open(path.format(**ids), method=method, json=body, headers=headers)
    payload = _assert_clear_error(response, status)
    if status == 422:
        assert payload.get("field") or payload.get("rule")
    assert "taxes" not in response.get_data(as_text=True)
    assert table_state() == before


BODY_ENDPOINTS = [
    ("POST", "/api/v1/memory"),
    ("PATCH", MEMORY),
    ("POST", "/api/v1/memory/query"),
    ("PUT", "/api/v1/agent/refinement-prompt"),
    ("PUT", "/api/v1/agent/mechanic-preconsent"),
    ("PUT", "/api/v1/checkpoints/t1"),
    ("POST", PATCH + "/confirm"),
]
RAW_PARAMS = [
    pytest.param(case, method, path, id=f"{method} {path} {case}")
    for case in RAW_CASES
    for method, path in BODY_ENDPOINTS
]


@pytest.mark.parametrize(("case", "method", "path"), RAW_PARAMS)
def test_malformed_bodies_get_a_clear_4xx_on_every_body_endpoint(client, world, case, method, path):
    headers, ids = world
    raw, content_type, status = RAW_CASES[case]
    before = table_state()
    response = client.open(
        path.format(**ids), method=method, data=raw, content_type=content_type, headers=headers
    )
    _assert_clear_error(response, status)
    assert table_state() == before


@pytest.mark.parametrize("case", list(ARG_CASES), ids=list(ARG_CASES))
def test_bad_query_strings_and_path_ids_get_a_clear_4xx(client, world, case):
    headers, ids = world
    path, status = ARG_CASES[case]
    before = table_state()
    _assert_clear_error(client.get(path.format(**ids), headers=headers), status)
    assert table_state() == before


def test_oversized_bodies_are_413_json(client, world):
    headers, ids = world
    before = table_state()
    big = json.dumps({"content": "a" * 300_000, "category": "tasks"})
    for method, path in (
        ("POST", "/api/v1/memory"),
        ("POST", "/api/v1/memory/query"),
        ("PATCH", MEMORY.format(**ids)),
    ):
        response = client.open(
            path, method=method, data=big, content_type="application/json", headers=headers
        )
        _assert_clear_error(response, 413)
    assert table_state() == before


def test_hostile_but_valid_text_is_plain_text(client, world):
    """SQL metacharacters and unusual Unicode in text fields are data: stored and searched verbatim,
    never interpreted, and they match nothing they should not."""
    headers, ids = world
    texts = [
        "The user's note reads: " + SQL,
        "The user writes \u05e9\u05dc\u05d5\u05dd and \u0645\u0631\u062d\u0628\u0627 (right to left).",
        "The user likes e\u0301clairs and \U0001f9c1 cupcakes.",
        'The user types 100% of _all_ wildcards \\ and "quotes".',
    ]
    created = []
    for text in texts:
        response = client.post("/api/v1/memory", json={"content": text, "category": "tasks", "user_id": "u-hostile"},
                               headers=headers)  # fmt: skip
        assert response.status_code == 201, response.get_json()
        created.append(response.get_json()["memory"]["id"])
        stored = client.get(f"/api/v1/memory/{created[-1]}", headers=headers).get_json()["content"]
        assert stored == unicodedata.normalize(
            "NFC", text
        )  # normalised (docs/spec/003-memory-system.md §9), otherwise verbatim
    for probe, expected in (
        (SQL, [created[0]]),
        ("\u05e9\u05dc\u05d5\u05dd", [created[1]]),
        ("cupcakes", [created[2]]),
    ):
        response = client.post(
            "/api/v1/memory/query",
            json={"query": probe, "filters": {"user_id": "u-hostile"}},
            headers=headers,
        )
        assert response.status_code == 200
        assert [r["id"] for r in response.get_json()["results"]] == expected, probe
    for hostile in (SQL, "' OR '1'='1", "%", "_", "*"):
        response = client.post(
            "/api/v1/memory/query", json={"query": "taxes", "filters": {"user_id": hostile}}, headers=headers
        )
        assert response.status_code == 200 and response.get_json()["results"] == []
        for path in (f"/api/v1/export?user_id={hostile}", f"/api/v1/checkpoints/t1?user_id={hostile}"):
            assert client.get(path, headers=headers).status_code in (200, 404)
    assert db.session.execute(db.text("SELECT count(*) FROM agent_memories")).scalar() == 1 + len(texts)
