"""The LangGraph endpoints in-process (no server needed): the per-agent checkpoint quota holds for
LangGraph blobs and writes too, and refusals change nothing."""

from __future__ import annotations

import base64

from sqlalchemy import func, select

from models import AgentMemory, LangGraphBlob, LangGraphCheckpoint, LangGraphWrite, db
from tests.api_support import bearer


def _checkpoint(checkpoint_id: str, blob: bytes, parent: str | None = None) -> dict:
    return {
        "thread_id": "t",
        "parent_checkpoint_id": parent,
        "checkpoint": {
            "v": 4,
            "id": checkpoint_id,
            "ts": "2026-11-23T00:00:00+00:00",
            "channel_versions": {"a": checkpoint_id},
        },
        "metadata": {"step": 1},
        "blobs": [
            {
                "channel": "a",
                "version": checkpoint_id,
                "type": "bytes",
                "data": base64.b64encode(blob).decode(),
            }
        ],
    }


def _count(model, agent_id: int) -> int:
    return db.session.scalar(select(func.count()).select_from(model).where(model.agent_id == agent_id))


def test_the_checkpoint_quota_counts_langgraph_blobs_and_writes(app, client, make_agent):
    app.config["MAX_CHECKPOINT_BYTES_PER_AGENT"] = 2000
    agent = make_agent()
    headers = bearer(agent)
    assert (
        client.post(
            "/api/v1/langgraph/checkpoints", json=_checkpoint("1", b"x" * 1200), headers=headers
        ).status_code
        == 201
    )
    refused = client.post(
        "/api/v1/langgraph/checkpoints", json=_checkpoint("2", b"y" * 1200, "1"), headers=headers
    )
    assert refused.status_code == 413 and refused.json["error"] == "quota_exceeded"
    assert refused.json["limit"] == "MAX_CHECKPOINT_BYTES_PER_AGENT"
    assert (_count(LangGraphCheckpoint, agent.id), _count(LangGraphBlob, agent.id)) == (1, 1)
    writes = {
        "thread_id": "t",
        "checkpoint_id": "1",
        "task_id": "task",
        "writes": [
            {"idx": 0, "channel": "a", "type": "bytes", "data": base64.b64encode(b"z" * 1500).decode()}
        ],
    }
    refused = client.post("/api/v1/langgraph/writes", json=writes, headers=headers)
    assert refused.status_code == 413 and _count(LangGraphWrite, agent.id) == 0
    # Deleting the thread frees the bytes.
    assert (
        client.post("/api/v1/langgraph/threads/delete", json={"thread_id": "t"}, headers=headers).json[
            "deleted"
        ]
        == 1
    )
    assert (
        client.post(
            "/api/v1/langgraph/checkpoints", json=_checkpoint("2", b"y" * 1200), headers=headers
        ).status_code
        == 201
    )


def test_saving_a_checkpoint_id_again_replaces_it_and_counts_it_once(app, client, make_agent):
    app.config["MAX_CHECKPOINT_BYTES_PER_AGENT"] = 3000
    agent = make_agent()
    headers = bearer(agent)
    for _ in range(3):
        body = _checkpoint("1", b"x" * 10)
        body["blobs"] = []
        assert client.post("/api/v1/langgraph/checkpoints", json=body, headers=headers).status_code == 201
    assert _count(LangGraphCheckpoint, agent.id) == 1


def test_malformed_langgraph_requests_get_a_clear_error_and_change_nothing(client, make_agent):
    agent = make_agent()
    headers = bearer(agent)
    no_versions = _checkpoint("1", b"x")
    del no_versions["checkpoint"]["channel_versions"]
    infinite = _checkpoint("1", b"x")
    infinite["metadata"] = {"score": 1e400}
    huge_version = _checkpoint("1", b"x")
    huge_version["checkpoint"]["channel_versions"] = {"a": "9" * 200}
    for body in (no_versions, infinite, huge_version, {"thread_id": "t"}):
        answer = client.post("/api/v1/langgraph/checkpoints", json=body, headers=headers)
        assert answer.status_code == 422 and answer.json["error"] == "invalid", body
    for cursor in ("99999999999:x", "1"):  # past the id range, and not a cursor at all
        answer = client.post("/api/v1/langgraph/checkpoints/search", json={"cursor": cursor}, headers=headers)
        assert answer.status_code == 422 and answer.json["error"] == "invalid"
    bad_op = {"ops": [{"op": "put", "namespace": ["a.b"], "key": "k", "value": {"content": "x"}}]}
    answer = client.post("/api/v1/langgraph/store/batch", json=bad_op, headers=headers)
    assert answer.status_code == 422 and answer.json["field"].startswith("ops.0")
    assert _count(LangGraphCheckpoint, agent.id) == 0 and _count(LangGraphBlob, agent.id) == 0


def test_langgraph_write_routes_take_bodies_up_to_16_mib(client, make_agent):
    headers = bearer(make_agent())
    big = _checkpoint("1", b"x" * (2 * 1024 * 1024))  # past the API's 256 KiB, and the old route's 2 MiB
    assert client.post("/api/v1/langgraph/checkpoints", json=big, headers=headers).status_code == 201
    too_big = _checkpoint("2", b"x" * (13 * 1024 * 1024))  # 17+ MiB once base64-encoded
    answer = client.post("/api/v1/langgraph/checkpoints", json=too_big, headers=headers)
    assert answer.status_code == 413


def _batch(client, headers, *ops):
    answer = client.post("/api/v1/langgraph/store/batch", json={"ops": list(ops)}, headers=headers)
    assert answer.status_code == 200, answer.json
    return answer.json["results"]


def test_store_search_examines_at_most_max_scan_items_under_a_prefix(client, make_agent, monkeypatch):
    from models.integrations import langgraph_store

    monkeypatch.setattr(langgraph_store, "MAX_SCAN", 2)
    headers = bearer(make_agent(role="supervisor"))
    puts = [
        {"op": "put", "namespace": ["n"], "key": f"k{i}", "value": {"content": f"Fact number {i}."}}
        for i in range(3)
    ]
    _batch(client, headers, *puts)
    (found,) = _batch(client, headers, {"op": "search", "namespace_prefix": ["n"], "limit": 10})
    assert [item["key"] for item in found["items"]] == ["k2", "k1"]  # the latest updated first


def test_a_json_value_rewritten_as_prose_comes_back_as_its_text(client, make_agent):
    from models.changes import mutations

    agent = make_agent(role="supervisor")
    headers = bearer(agent)
    (put,) = _batch(
        client, headers, {"op": "put", "namespace": ["n"], "key": "k", "value": {"a": 1, "b": "two"}}
    )
    memory_id = put["item"]["memory_id"]
    assert db.session.get(AgentMemory, memory_id).content == '{"a":1,"b":"two"}'  # compact, sorted keys
    (got,) = _batch(client, headers, {"op": "get", "namespace": ["n"], "key": "k"})
    assert got["item"]["value"] == {"a": 1, "b": "two"}
    mutations.update_memory(agent.id, memory_id, actor="admin:1", content="The user counts to two.")
    (got,) = _batch(client, headers, {"op": "get", "namespace": ["n"], "key": "k"})
    assert got["item"]["value"] == {"content": "The user counts to two."}


def test_store_text_goes_through_the_writing_rules(client, make_agent):
    headers = bearer(make_agent(role="supervisor"))
    value = {"content": "The  user\tlikes   tea."}
    (put,) = _batch(client, headers, {"op": "put", "namespace": ["n"], "key": "k", "value": value})
    assert put["item"]["value"] == {"content": "The user likes tea."}
    answer = client.post(
        "/api/v1/langgraph/store/batch",
        json={
            "ops": [
                {
                    "op": "put",
                    "namespace": ["n"],
                    "key": "j",
                    "value": {"content": "I like tea."},
                    "memory_type": "semantic",
                }
            ]
        },
        headers=headers,
    )
    assert answer.status_code == 422 and answer.json["rule"] == "semantic.third_person"
