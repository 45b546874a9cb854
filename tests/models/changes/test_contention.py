"""Exactness under contention, with real processes: gunicorn (2 workers x 8 threads) on the suite's database.

Requests to ONE memory are released together by a barrier, from one thread and one loopback
connection each (connected before the barrier, so they arrive as close together as the machine
allows), while an admin protects or the Time Machine rolls back in this process. Afterwards, on
committed state: every deletion succeeded exactly once, nothing answered 5xx, and the memory's
audit chain is whole (tests/audit_chain.py).
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from models import Agent, AgentMemory, NotFound, RollbackConflict, db
from models.changes import mutations as mut
from models.changes import timemachine as tm
from tests.audit_chain import assert_audit_chain, assert_row_is, content_text, row_columns

ADMIN = "admin:1"
TIMEOUT = 30  # seconds, for every request, the barrier, the joins and the server's start
DELAYS = (0.0, 0.02, 0.05, 0.1)  # seconds between the barrier and an in-process racer, one per round


# ----- the server and the clients -----


@pytest.fixture
def agent(app) -> tuple[int, str]:
    """(agent id, its API token)."""
    agent = Agent(name=f"contention-{uuid.uuid4().hex[:8]}")
    token = agent.issue_token()
    db.session.add(agent)
    db.session.commit()
    return agent.id, token


def new_memory(agent_id: int, content: str) -> int:
    """A core `profile` memory (inside the default allowlist), created through the mutation path, committed."""
    memory_id = mut.create_memory(agent_id, content, actor="admin:seed", category="profile", importance=3).id
    db.session.close()  # this process holds no transaction while the server works
    return memory_id


Request = tuple[str, str, dict | None]


def fire(port: int, token: str, requests: list[Request], *others: Callable[[], Any]) -> tuple[list, list]:
    """Send the requests at once, each on its own connection, and run `others` (in-process actions,
    each in its own thread) released by the same barrier. Returns ([(status, body)], [others' results]);
    an exception is returned, not raised, so every thread is accounted for."""
    barrier = threading.Barrier(len(requests) + len(others))
    answers: list[Any] = [None] * len(requests)
    results: list[Any] = [None] * len(others)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def send(i: int, method: str, path: str, body: dict | None) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            conn.connect()
            barrier.wait(timeout=TIMEOUT)
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            raw = response.read()
            answers[i] = (response.status, json.loads(raw) if raw else None)
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertions
            answers[i] = error
        finally:
            conn.close()

    def run(i: int, action: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=TIMEOUT)
            results[i] = action()
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertions
            results[i] = error

    threads = [threading.Thread(target=send, args=(i, *r), daemon=True) for i, r in enumerate(requests)]
    threads += [threading.Thread(target=run, args=(i, a), daemon=True) for i, a in enumerate(others)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a client thread is still waiting"
    for answer in answers:
        assert not isinstance(answer, Exception), f"a request failed without an answer: {answer!r}"
    assert all(a[0] < 500 for a in answers), f"server errors: {Counter(a[0] for a in answers)}"
    return answers, results


def in_app(app, action: Callable[[], Any], delay: float = 0.0) -> Callable[[], Any]:
    """The action in an app context (and so a database session) of its own, as a second process would,
    `delay` seconds after the barrier: the rounds of a test vary it, so the race falls both ways."""

    def run() -> Any:
        time.sleep(delay)
        with app.app_context():
            return action()

    return run


def statuses(answers: list, method: str | None = None, requests: list[Request] | None = None) -> Counter:
    if method is None:
        return Counter(status for status, _ in answers)
    return Counter(status for (status, _), (m, _, _) in zip(answers, requests, strict=True) if m == method)


def actions(records: list[dict]) -> list[str]:
    return [r["action"] for r in records]


def patch(memory_id: int, n: int) -> Request:
    return (
        "PATCH",
        f"/api/v1/memory/{memory_id}",
        {"content": f"Revision {n} of the note", "importance": 1 + n % 5},
    )


def delete(memory_id: int) -> Request:
    return "DELETE", f"/api/v1/memory/{memory_id}", None


# ----- the tests -----


def test_simultaneous_deletes_of_one_memory_succeed_exactly_once(server, agent):
    agent_id, token = agent
    for round_ in range(3):
        memory_id = new_memory(agent_id, f"Keeps a spare key with the neighbour ({round_})")
        answers, _ = fire(server, token, [delete(memory_id)] * 8)
        assert statuses(answers) == Counter({200: 1, 404: 7}), f"round {round_}"
        records = assert_audit_chain(agent_id, memory_id)
        assert actions(records) == ["create", "delete"]


def test_simultaneous_updates_and_deletes_leave_one_unbroken_audit_chain(server, agent):
    agent_id, token = agent
    rng = random.Random(11)
    for round_ in range(2):
        memory_id = new_memory(agent_id, f"Walks the dog at seven ({round_})")
        requests = [patch(memory_id, n) for n in range(12)] + [delete(memory_id)] * 4
        rng.shuffle(requests)
        answers, _ = fire(server, token, requests)
        assert set(statuses(answers)) <= {200, 404}
        assert statuses(answers, "DELETE", requests)[200] == 1  # the memory was active until a delete won
        records = assert_audit_chain(agent_id, memory_id)  # and no update after the delete
        updated = [r for r in records if r["action"] == "update"]
        assert actions(records) == ["create"] + ["update"] * len(updated) + ["delete"]
        acknowledged = sorted(body["memory"]["content"] for (status, body), (m, _, _) in zip(answers, requests, strict=True)
                              if m == "PATCH" and status == 200)  # fmt: skip
        with db.engine.connect() as conn:
            assert acknowledged == sorted(content_text(conn, r["after"]["content_ref"]) for r in updated)


def test_an_admin_protecting_while_the_agent_deletes_gets_one_winner_and_no_server_error(app, server, agent):
    agent_id, token = agent
    outcomes = Counter()
    for round_ in range(4):
        memory_id = new_memory(agent_id, f"Was born in Porto ({round_})")

        def protect(memory_id: int = memory_id) -> str:
            try:
                mut.set_constitutional(agent_id, memory_id, True, actor=ADMIN)
                return "protected"
            except NotFound:
                return "not found"

        answers, (admin,) = fire(server, token, [delete(memory_id)] * 8, in_app(app, protect, DELAYS[round_]))
        assert not isinstance(admin, Exception), f"the admin's protect failed: {admin!r}"
        assert set(statuses(answers)) <= {200, 404, 409}
        records = assert_audit_chain(agent_id, memory_id)
        with db.engine.connect() as conn:
            row = row_columns(conn, memory_id)
        if admin == "protected":  # the protect won: nothing deleted it
            assert statuses(answers)[200] == 0
            assert row["constitutional"] is True and row["deleted_at"] is None
            assert actions(records) == ["create", "protect"]
        else:  # a delete won, exactly once, and the admin was told the memory is gone
            assert statuses(answers)[200] == 1
            assert row["deleted_at"] is not None and row["constitutional"] is False
            assert actions(records) == ["create", "delete"]
        outcomes[admin] += 1
    print(f"protect vs delete outcomes: {dict(outcomes)}")


def test_rolling_back_the_last_of_a_storm_of_updates_restores_its_before_state_exactly(server, agent):
    agent_id, token = agent
    memory_id = new_memory(agent_id, "Drinks green tea in the afternoon")
    answers, _ = fire(server, token, [patch(memory_id, n) for n in range(12)])
    assert statuses(answers) == Counter({200: 12})
    records = assert_audit_chain(agent_id, memory_id)
    assert actions(records) == ["create"] + ["update"] * 12
    last = records[-1]
    tm.rollback_operation(last["op_id"], actor=ADMIN)
    db.session.close()
    with db.engine.connect() as conn:
        assert_row_is(conn, memory_id, last["before"])
    records = assert_audit_chain(agent_id, memory_id)
    assert actions(records)[-1] == "rollback"


def test_a_rollback_racing_updates_either_restores_exactly_or_refuses(app, server, agent):
    agent_id, token = agent
    outcomes = Counter()
    for round_ in range(3):
        memory_id = new_memory(agent_id, f"Plays chess on Sundays ({round_})")
        mut.update_memory(agent_id, memory_id, actor=ADMIN, content=f"Plays chess on Saturdays ({round_})")
        db.session.close()
        (last,) = [r for r in assert_audit_chain(agent_id, memory_id) if r["action"] == "update"]

        def roll_back(op_id: str = last["op_id"]) -> Any:
            try:
                return tm.rollback_operation(op_id, actor=ADMIN).op_id
            except RollbackConflict:
                return "conflict"

        answers, (result,) = fire(
            server, token, [patch(memory_id, n) for n in range(8)], in_app(app, roll_back, DELAYS[round_])
        )
        assert not isinstance(result, Exception), f"the rollback failed: {result!r}"
        assert statuses(answers) == Counter({200: 8})
        records = assert_audit_chain(agent_id, memory_id)
        if result == "conflict":  # an update committed first: the rollback must not overwrite it
            assert actions(records) == ["create", "update"] + ["update"] * 8
        else:  # the rollback went first: it wrote the update's before-state back, then the updates applied
            (rollback,) = [r for r in records if r["action"] == "rollback"]
            assert rollback["op_id"] == result and rollback["id"] == records[2]["id"]
            assert {k: v for k, v in rollback["after"].items() if k != "content_ref"} == {
                k: v for k, v in last["before"].items() if k != "content_ref"
            }
            with db.engine.connect() as conn:
                texts = [content_text(conn, s["content_ref"]) for s in (rollback["after"], last["before"])]
            assert texts[0] == texts[1]
        outcomes["conflict" if result == "conflict" else "restored"] += 1
    print(f"rollback vs updates outcomes: {dict(outcomes)}")


def test_the_chain_check_itself_catches_a_row_changed_behind_the_audit_log(agent):
    """The invariant can fail: a change that skips the mutation path breaks it (so the tests above mean something)."""
    agent_id, _ = agent
    memory_id = new_memory(agent_id, "Reads before sleeping")
    with db.engine.begin() as conn:
        conn.execute(sa.update(AgentMemory.__table__).where(AgentMemory.id == memory_id).values(importance=5))
    with pytest.raises(AssertionError, match="importance"):
        assert_audit_chain(agent_id, memory_id)
