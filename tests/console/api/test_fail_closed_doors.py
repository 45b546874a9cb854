"""The doors refuse what the rooms behind them cannot hold: a checkpoint naming more channels than the
limit, a store namespace longer than its column, a sign-in `next=` that is not a plain same-site path,
a body over the limit however it is sent, a URL path that is not UTF-8. And what is admitted stays
readable: no statement's bound parameters grow with one checkpoint's channel count or one thread's size."""

from __future__ import annotations

import base64
import io
import json
import re

import pytest
from sqlalchemy import func, select

from console.api.auth import MAX_BODY_BYTES
from models import LangGraphBlob, LangGraphCheckpoint, db
from models.integrations.langgraph_checkpoints import BATCH, MAX_CHECKPOINT_CHANNELS
from models.integrations.langgraph_store import StoreItem
from tests.api_support import bearer
from tests.browser.support import ADMIN_PASSWORD, client_for, csrf_from, make_admin
from tests.sql_statements import statements_sent


def _put(client, headers, checkpoint_id: str, channels: int, blobs: range = range(0)):
    versions = {f"channel-{n}": checkpoint_id for n in range(channels)}
    body = {
        "thread_id": "wide",
        "checkpoint": {
            "v": 4,
            "id": checkpoint_id,
            "ts": "2026-11-28T00:00:00+00:00",
            "channel_versions": versions,
        },
        "metadata": {"step": 1},
        "blobs": [
            {
                "channel": f"channel-{n}",
                "version": checkpoint_id,
                "type": "bytes",
                "data": base64.b64encode(b"v").decode(),
            }
            for n in blobs
        ],
    }
    return client.post("/api/v1/langgraph/checkpoints", json=body, headers=headers)


def _count(model, agent_id: int) -> int:
    return db.session.scalar(select(func.count()).select_from(model).where(model.agent_id == agent_id))


# ----- LangGraph checkpoints -----


def test_a_checkpoint_naming_more_channels_than_the_limit_is_refused_naming_it(client, make_agent):
    agent = make_agent()
    headers = bearer(agent)
    answer = _put(client, headers, "1", 65_536)  # past PostgreSQL's bound-parameter limit too
    assert answer.status_code == 422, answer.json
    assert answer.json["field"] == "checkpoint.channel_versions"
    assert f"{MAX_CHECKPOINT_CHANNELS}" in answer.json["message"].replace(",", "")
    assert _count(LangGraphCheckpoint, agent.id) == 0
    assert _put(client, headers, "1", MAX_CHECKPOINT_CHANNELS + 1).status_code == 422
    assert _put(client, headers, "1", MAX_CHECKPOINT_CHANNELS).status_code == 201


def test_checkpoint_reads_and_copies_send_a_bounded_number_of_parameters_per_statement(client, make_agent):
    agent = make_agent()
    headers = bearer(agent)
    for n, checkpoint_id in enumerate(("1", "2", "3")):
        answer = _put(client, headers, checkpoint_id, 3000, blobs=range(n * 1000, (n + 1) * 1000))
        assert answer.status_code == 201, answer.json
    with statements_sent() as reads:
        latest = client.get("/api/v1/langgraph/checkpoint?thread_id=wide", headers=headers)
        page = client.post("/api/v1/langgraph/checkpoints/search", json={}, headers=headers)
    with statements_sent() as copies:
        copied = client.post(
            "/api/v1/langgraph/threads/copy",
            json={"source_thread_id": "wide", "target_thread_id": "copy"},
            headers=headers,
        )
    assert latest.status_code == 200 and len(latest.json["checkpoint"]["channel_versions"]) == 3000
    # The latest checkpoint names every channel at version "3"; only its own 1000 blobs are at "3".
    assert len(latest.json["channel_values"]) == 1000
    assert page.status_code == 200 and len(page.json["checkpoints"]) == 3
    assert copied.status_code == 200 and copied.json["copied"] == 3
    # A batch of (channel, version) pairs per read; a batch of rows (11 columns at most) per copy.
    assert max(len(parameters or ()) for _, parameters in reads) <= 2 * BATCH + 10
    assert max(len(parameters or ()) for _, parameters in copies) <= 11 * BATCH
    assert _count(LangGraphBlob, agent.id) == 6000


def test_the_openapi_document_says_a_checkpoint_needs_an_id_and_channel_versions(client):
    document = client.get("/api/v1/openapi.json").json
    schema = document["components"]["schemas"]
    put = schema["CheckpointPut"]["properties"]["checkpoint"]
    target = schema[put["$ref"].rsplit("/", 1)[-1]] if "$ref" in put else put
    assert set(target["required"]) >= {"id", "channel_versions"}
    assert target["properties"]["channel_versions"]["maxProperties"] == MAX_CHECKPOINT_CHANNELS


@pytest.mark.parametrize(
    "checkpoint",
    [
        {"channel_versions": {"a": 1}},  # no id
        {"id": "1"},  # no channel versions
        {"id": "", "channel_versions": {}},
        {"id": "1", "channel_versions": {"a": True}},
        {"id": "1", "channel_versions": {"": 1}},
        {"id": "1", "channel_versions": {"a": 1}, "ts": 1e400},
    ],
)
def test_a_checkpoint_without_a_valid_id_and_channel_versions_is_refused(client, make_agent, checkpoint):
    agent = make_agent()
    answer = client.post(
        "/api/v1/langgraph/checkpoints",
        json={"thread_id": "t", "checkpoint": checkpoint},
        headers=bearer(agent),
    )
    assert answer.status_code == 422 and answer.json["field"].startswith("checkpoint"), answer.json
    assert _count(LangGraphCheckpoint, agent.id) == 0 and _count(LangGraphBlob, agent.id) == 0


def test_a_stored_checkpoint_keeps_every_key_it_was_sent_with(client, make_agent):
    headers = bearer(make_agent())
    document = {"v": 4, "id": "1", "ts": "2026-11-28", "channel_versions": {"a": 1.5, "b": "x"},
                "versions_seen": {"n": {"a": 1}}, "pending_sends": []}  # fmt: skip
    put = client.post(
        "/api/v1/langgraph/checkpoints", json={"thread_id": "t", "checkpoint": document}, headers=headers
    )
    assert put.status_code == 201
    got = client.get("/api/v1/langgraph/checkpoint?thread_id=t", headers=headers).json["checkpoint"]
    assert got == document


# ----- the LangGraph store -----


def _store_put(client, headers, namespace):
    op = {
        "op": "put",
        "namespace": namespace,
        "key": "k",
        "value": {"content": "A plain fact about the user."},
    }
    return client.post("/api/v1/langgraph/store/batch", json={"ops": [op]}, headers=headers)


def test_a_store_namespace_longer_than_its_column_is_refused_naming_the_limit(client, make_agent):
    agent = make_agent()
    headers = bearer(agent)
    limit = StoreItem.__table__.c.namespace.type.length
    answer = _store_put(client, headers, ["x" * 128] * 8)  # 8 * 128 + 7 separators
    assert answer.status_code == 422, answer.json
    assert answer.json["field"].startswith("ops.0") and "namespace" in answer.json["field"]
    assert str(limit) in answer.json["message"]
    search = {"ops": [{"op": "search", "namespace_prefix": ["x" * 128] * 9}]}
    assert client.post("/api/v1/langgraph/store/batch", json=search, headers=headers).status_code == 422
    assert db.session.scalar(select(func.count()).select_from(StoreItem)) == 0
    fits = ["x" * 128] * 7 + ["y" * (limit - 7 * 129)]  # exactly the column's length
    assert _store_put(client, headers, fits).status_code == 200


# ----- sign-in -----


@pytest.mark.parametrize(
    "target",
    [
        "/\r\nSet-Cookie: x=1",
        "/jobs\r\n",
        "/%0d%0a",
        "/\\evil.example",
        "//evil.example",
        "https://evil.example/",
        "/jobs\tx",
        "/caf\u00e9",
        " /jobs",
    ],
)
def test_an_unsafe_next_after_sign_in_goes_to_the_dashboard(app, target):
    make_admin()
    client = client_for(app)
    token = csrf_from(client.get("/login").text)
    response = client.post(
        "/login",
        query_string={"next": target},
        data={"email": "admin@example.com", "password": ADMIN_PASSWORD, "csrf_token": token},
    )
    assert response.status_code == 302
    location = response.headers["Location"]
    assert location == "/" or (target == "/%0d%0a" and location == "/%0d%0a"), location


def test_a_plain_same_site_next_is_kept_after_sign_in(app):
    make_admin()
    client = client_for(app)
    token = csrf_from(client.get("/login").text)
    response = client.post(
        "/login?next=/agents/1?tab=memories",
        data={"email": "admin@example.com", "password": ADMIN_PASSWORD, "csrf_token": token},
    )
    assert response.headers["Location"] == "/agents/1?tab=memories"


# ----- request bodies and paths -----


def _chunked(client, path, raw: bytes, headers):
    return client.post(
        path,
        input_stream=io.BytesIO(raw),
        content_type="application/json",
        headers={**headers, "Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},  # what gunicorn says of a chunked body
    )


def test_a_chunked_body_over_the_limit_is_413_like_a_declared_one(client, make_agent):
    agent = make_agent(role="executor")
    headers = bearer(agent)
    big = json.dumps({"content": "a" * MAX_BODY_BYTES, "category": "tasks"}).encode()
    answer = _chunked(client, "/api/v1/memory", big, headers)
    assert answer.status_code == 413 and answer.json["error"] == "request_entity_too_large", answer.json
    assert str(MAX_BODY_BYTES) in answer.json["message"].replace(",", "")
    small = json.dumps(
        {"content": "The user files taxes in April.", "memory_type": "semantic", "category": "tasks"}
    ).encode()
    created = _chunked(client, "/api/v1/memory", small, headers)
    assert created.status_code == 201, created.json
    exactly = small + b" " * (MAX_BODY_BYTES - len(small))  # at the limit is within it
    assert _chunked(client, "/api/v1/memory", exactly, headers).status_code == 201


@pytest.mark.parametrize(
    "path", ["/api/v1/checkpoints/t%FFx", "/api/v1/checkpoints/t%FEx", "/api/v1/memory/%C3"]
)
def test_a_url_path_that_is_not_utf8_is_refused_naming_the_problem(client, make_agent, path):
    headers = bearer(make_agent())
    answer = client.put(path, json={"checkpoint_data": {"a": 1}}, headers=headers)
    assert answer.status_code == 400 and answer.json["error"] == "invalid_path", answer.json
    assert "UTF-8" in answer.json["message"]
    assert re.search(r"[\x80-\xff]|\ufffd", answer.get_data(as_text=True)) is None


def test_a_url_path_in_utf8_still_names_its_thread(client, make_agent):
    headers = bearer(make_agent())
    answer = client.put("/api/v1/checkpoints/caf%C3%A9", json={"checkpoint_data": {"a": 1}}, headers=headers)
    assert answer.status_code == 201 and answer.json["thread_id"] == "café"
