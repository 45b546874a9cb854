"""memconsole_client.Client / AsyncClient against a running console: every operation of the API has a
method, answers are typed, refusals raise typed errors carrying the API's code."""

from __future__ import annotations

import pytest

from console.api import api
from memconsole_client import OPERATIONS, AsyncClient, Client, errors, models
from models.changes import mutations
from models.changes.patches import propose
from tests.integrations import aio


def test_every_api_operation_has_a_client_method():
    operations = {op.name for op in api.operations}
    missing = sorted(operations - set(OPERATIONS))
    assert not missing, f"operations without a client method: {missing}"
    assert not sorted(set(OPERATIONS) - operations), "client methods for operations the API does not have"
    for method in OPERATIONS.values():
        assert callable(getattr(Client, method)) and callable(getattr(AsyncClient, method))


def test_memory_calls_round_trip_with_typed_answers(live_console):
    _, token = live_console.agent(role="supervisor")
    with Client(live_console.base_url, token) as client:
        written = client.save_memory(
            "The user runs every Sunday.", category="activity", user_id="u1", thread_id="t1"
        )
        assert isinstance(written, models.MemoryWritten) and written.rev == 1
        memory_id = written.memory.id
        assert client.get_memory(memory_id).content == "The user runs every Sunday."
        found = client.query("runs Sunday", return_="full")
        assert isinstance(found.results[0], models.FullResult) and found.results[0].id == memory_id
        updated = client.update_memory(memory_id, content="The user runs every Saturday.")
        assert updated.memory.content == "The user runs every Saturday."
        assert [e.event for e in client.memory_history(memory_id).events] == ["UPDATE", "ADD"]
        export = client.export_user("u1")
        assert [line.type for line in export] == ["memory", "summary"] and export[0].memory.id == memory_id
        assert client.delete_memory(memory_id).id == memory_id
        assert client.restore_memory(memory_id).memory.id == memory_id

        agent = client.get_agent()
        assert isinstance(agent, models.AgentInfo) and "activity" in agent.categories
        assert client.set_refinement_prompt("Merge only exact duplicates.").is_default is False
        assert client.get_refinement_prompt().refinement_prompt == "Merge only exact duplicates."
        assert client.set_mechanic_preconsent(True).mechanic_preconsent is True
        assert client.list_grants() == []

        assert client.get_supervisor_checkpoint("thread-1") is None
        saved = client.put_supervisor_checkpoint("thread-1", {"step": 3})
        assert saved.checkpoint_data == {"step": 3}
        assert client.get_supervisor_checkpoint("thread-1").checkpoint_data == {"step": 3}


def test_patches_are_listed_and_decided(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    with live_console.app.app_context():
        patch_id = propose(
            agent_id,
            "create",
            "city",
            {"content": "The user lives in Oslo.", "category": "profile"},
            turn="m1",
        ).id
    with Client(live_console.base_url, token) as client:
        assert [p.id for p in client.list_patches(status="pending")] == [patch_id]
        assert client.get_patch(patch_id).field == "city"
        with pytest.raises(errors.Conflict) as same_turn:  # the proposing turn cannot consent to itself
            client.confirm_patch(patch_id, user_turn="m1")
        assert same_turn.value.code == "consent_same_turn"
        decided = client.confirm_patch(patch_id, user_turn="m2")
        assert decided.patch.status == "confirmed" and decided.memory is not None
        with pytest.raises(errors.Conflict) as refused:
            client.reject_patch(patch_id)
        assert refused.value.code == "patch_not_pending"


def test_refusals_raise_typed_errors_carrying_the_apis_code(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    with live_console.app.app_context():
        locked = mutations.create_memory(
            agent_id,
            "The user is allergic to nuts.",
            actor="admin:1",
            category="profile",
            constitutional=True,
        ).id
    with Client(live_console.base_url, token) as client:
        with pytest.raises(errors.ConstitutionalLocked) as refused:
            client.delete_memory(locked)
        assert refused.value.status == 409 and refused.value.code == "constitutional"
        with pytest.raises(errors.Forbidden) as refused:
            client.save_memory("The user reads.", category="knowledge")
        assert refused.value.code == "category_not_allowed"
        with pytest.raises(errors.NotFound):
            client.get_memory(10**6)
        with pytest.raises(errors.ValidationFailed) as refused:
            client.save_memory("I like tea.", category="preferences")
        assert (
            refused.value.code == "writing_rule" and refused.value.details["rule"] == "semantic.third_person"
        )
    with (
        Client(live_console.base_url, "not-a-token") as stranger,
        pytest.raises(errors.Unauthorized) as refused,
    ):
        stranger.get_agent()
    assert refused.value.code == "unauthorized"
    with Client("http://127.0.0.1:9", token) as nowhere, pytest.raises(errors.TransportError):
        nowhere.get_agent()


def test_the_async_client_makes_the_same_calls(live_console):
    _, token = live_console.agent(role="supervisor")

    async def run():
        async with AsyncClient(live_console.base_url, token) as client:
            written = await client.save_memory("The user keeps bees.", category="activity")
            found = await client.query("bees")
            with pytest.raises(errors.NotFound):
                await client.get_memory(10**6)
            return written, found

    written, found = aio.run(run())
    assert [r.id for r in found.results] == [written.memory.id]


def test_settings_come_from_the_environment(monkeypatch, live_console):
    monkeypatch.setenv("MEMCONSOLE_URL", live_console.base_url)
    monkeypatch.setenv("MEMCONSOLE_TOKEN", live_console.agent()[1])
    with Client() as client:
        assert client.base_url == live_console.base_url + "/api/v1"
        assert client.get_agent().role == "supervisor"
    monkeypatch.delenv("MEMCONSOLE_TOKEN")
    with pytest.raises(ValueError, match="MEMCONSOLE_TOKEN"):
        Client()


def test_every_error_status_maps_to_its_typed_error():
    cases = {
        400: errors.BadRequest,
        401: errors.Unauthorized,
        403: errors.Forbidden,
        404: errors.NotFound,
        409: errors.Conflict,
        413: errors.PayloadTooLarge,
        415: errors.BadRequest,
        422: errors.ValidationFailed,
        429: errors.RateLimited,
        503: errors.ServerError,
    }
    for status, cls in cases.items():
        error = errors.error_for(
            status, {"error": "some_code", "message": "why", "field": "x"}, {"Retry-After": "7"}
        )
        assert type(error) is cls and (error.status, error.code, error.message) == (
            status,
            "some_code",
            "why",
        )
        assert error.details == {"field": "x"}
    assert (
        errors.error_for(
            429, {"error": "rate_limited", "message": "slow down"}, {"Retry-After": "7"}
        ).retry_after
        == 7
    )
    assert (
        type(errors.error_for(409, {"error": "constitutional", "message": "locked"}))
        is errors.ConstitutionalLocked
    )
    unparsed = errors.error_for(502, None)
    assert type(unparsed) is errors.ServerError and unparsed.code == "http_502"
