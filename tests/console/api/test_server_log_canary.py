"""No memory text in what a real web server logs (invariant 6, "Logs are output too"): gunicorn serving the
app, its access log on as an operator might turn it on, answers an agent's calls that carry a canary in
memory text — writes, an update, questions, the context block, history, export, checkpoints, LangGraph's
store, a turn for extraction, and calls refused for bad input — and nothing it writes holds the canary,
while its log shows each call. tests/jobs/test_log_canary.py covers a database error inside a request, in
process; tests/jobs/test_recurring_jobs_log_canary.py the worker and the scheduler."""

from __future__ import annotations

import http.client
import json
import uuid
from typing import Any

from models import db
from tests.api_support import bearer
from tests.gunicorn_server import TIMEOUT, serve


def call(port: int, headers: dict[str, str], method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        payload = None if body is None else json.dumps(body)
        conn.request(method, "/api/v1" + path, body=payload, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        is_json = response.getheader("Content-Type", "").startswith("application/json")
        return response.status, json.loads(raw) if is_json else raw  # export: NDJSON; context: text
    finally:
        conn.close()


def test_an_agents_calls_with_memory_text_leave_none_in_the_servers_log(app, make_agent, redis_url, tmp_path):
    canary = f"canary{uuid.uuid4().hex}"
    agent = make_agent(role="supervisor")
    headers = bearer(agent) | {"Content-Type": "application/json", "Connection": "close"}
    db.session.close()  # the server writes; this process holds no transaction meanwhile
    log = tmp_path / "server.log"
    with serve(app.config["SQLALCHEMY_DATABASE_URI"], redis_url, log=log, MULTI_FACT_EXTRACTION="1") as port:
        status, created = call(port, headers, "POST", "/memory", {
            "content": f"The user's locker code is {canary}.", "memory_type": "semantic",
            "category": "tasks", "user_id": "maya",
        })  # fmt: skip
        assert status == 201, created
        memory = created["memory"]["id"]
        store_put = {
            "ops": [{"op": "put", "namespace": ["notes"], "key": "locker", "value": {"text": canary}}]
        }
        calls = [
            ("PATCH", f"/memory/{memory}", {"content": f"The user's locker code is now {canary}."}, 200),
            ("POST", "/memory/query", {"query": f"what is the {canary} locker code?"}, 200),
            ("GET", "/context?format=text", None, 200),
            ("GET", f"/memory/{memory}/history", None, 200),
            ("GET", "/export?user_id=maya", None, 200),
            ("PUT", "/checkpoints/thread-1", {"checkpoint_data": {"note": canary}}, 201),
            ("GET", "/checkpoints/thread-1", None, 200),
            ("POST", "/langgraph/store/batch", store_put, 200),
            ("POST", "/memory/extract", {"turn": f"My locker code changed to {canary}. " * 12}, 202),
            # Refused for bad input, the canary in what was refused.
            ("POST", "/memory", {"content": canary, "memory_type": "no-such-type", "category": "tasks"}, 422),
            ("PATCH", f"/memory/{memory}", {"content": canary, "importance": 99}, 422),
            ("POST", "/memory/query", {"query": canary, "top_k": -1}, 422),
            ("DELETE", f"/memory/{memory}", None, 200),
        ]
        for method, path, body, expected in calls:
            status, answer = call(port, headers, method, path, body)
            assert status == expected, (method, path, answer)
    written = log.read_text()
    for method, path, _, _ in calls:  # the log is the server's, call by call
        assert f'"{method} /api/v1{path.split("?")[0]}' in written
    assert canary not in written
