"""The queue layout (docs/reference/jobs.md, "Queues"): an admin's request is never stuck behind a burst of
background work.

Workers take their queues in the order of `RQ_QUEUES`, `interactive` first. A refinement an admin asks
for (console, CLI) goes on `interactive`; the weekly sweep and the over-budget scan queue theirs on `llm`.
Real Redis, real RQ workers.
"""

from __future__ import annotations

from rq import SimpleWorker
from rq.job import Job

from infra.queues import QUEUE_TIMEOUTS
from jobs.triggers import enqueue_refinement, refinement_queue
from models import RefinementSession, db

ADMIN = "admin:1"


def _agents_with_memories(make_agent, make_memory, count: int):
    agents = []
    for n in range(count):
        agent = make_agent()
        make_memory(agent, f"Fact number {n} about the garden")
        agents.append(agent)
    return agents


def test_workers_take_the_interactive_queue_first(app):
    assert app.config["RQ_QUEUES"][0] == "interactive"
    assert [q.name for q in app.extensions["rq"].queues] == list(app.config["RQ_QUEUES"])
    assert QUEUE_TIMEOUTS["interactive"] == QUEUE_TIMEOUTS["llm"]  # the same job runs on both
    assert refinement_queue(ADMIN) == "interactive"
    assert refinement_queue("system:over-budget") == refinement_queue("system:sweep") == "llm"


def test_an_admins_refinement_runs_before_a_burst_of_scheduled_ones(app, redis_conn, make_agent, make_memory):
    *scanned, chosen = _agents_with_memories(make_agent, make_memory, 13)
    burst = [
        enqueue_refinement(agent.id, "over_budget", "system:over-budget", force=False) for agent in scanned
    ]
    asked = enqueue_refinement(chosen.id, "console", ADMIN)
    rq = app.extensions["rq"]
    assert len(rq.queue("llm")) == 12 and rq.queue("interactive").job_ids == [asked.job_id]

    # One worker on every queue, in the configured order, runs a single job: the admin's.
    SimpleWorker(rq.queues, connection=redis_conn).work(burst=True, max_jobs=1)
    db.session.expire_all()
    assert db.session.get(RefinementSession, asked.id).status != "queued"
    assert {db.session.get(RefinementSession, s.id).status for s in burst} == {"queued"}
    assert len(rq.queue("llm")) == 12


def test_an_admin_asking_for_a_session_a_scan_queued_moves_it_to_the_front(
    app, redis_conn, make_agent, make_memory
):
    *others, chosen = _agents_with_memories(make_agent, make_memory, 4)
    for agent in others:
        enqueue_refinement(agent.id, "over_budget", "system:over-budget", force=False)
    scanned = enqueue_refinement(chosen.id, "over_budget", "system:over-budget", force=False)
    rq = app.extensions["rq"]
    assert scanned.job_id in rq.queue("llm").job_ids

    again = enqueue_refinement(chosen.id, "console", ADMIN)
    assert again.id == scanned.id  # not queued twice: the same session, its job moved
    assert rq.queue("interactive").job_ids == [scanned.job_id]
    assert scanned.job_id not in rq.queue("llm").job_ids
    assert Job.fetch(scanned.job_id, connection=redis_conn).origin == "interactive"

    SimpleWorker(rq.queues, connection=redis_conn).work(burst=True, max_jobs=1)
    db.session.expire_all()
    assert db.session.get(RefinementSession, scanned.id).status != "queued"
    assert len(rq.queue("llm")) == 3


def test_the_mechanics_consent_question_is_not_stuck_behind_scheduled_model_work(
    app, make_agent, make_memory, redis_conn
):
    """The admin who asked for a grant waits on its page for the agent's answer: the consent question
    goes on `interactive`, so a worker takes it before a burst the scans queued on `llm`."""
    from jobs.mechanic import enqueue_consent
    from models import create_admin
    from models.admins.mechanic import request_grant

    for agent in _agents_with_memories(make_agent, make_memory, 5):
        enqueue_refinement(agent.id, "over_budget", "system:over-budget", force=False)
    target = make_agent(mechanic_preconsent=True)
    admin = create_admin("mechanic@example.com", "a long enough password")
    grant = request_grant(target.id, admin.id, "Checking a reported mix-up in a date", "all", [], 5)
    job_id = enqueue_consent(grant.id)
    rq = app.extensions["rq"]
    assert rq.queue("interactive").job_ids == [job_id] and len(rq.queue("llm")) == 5

    SimpleWorker(rq.queues, connection=redis_conn).work(burst=True, max_jobs=1)
    assert Job.fetch(job_id, connection=redis_conn).get_status() == "finished"
    assert len(rq.queue("llm")) == 5  # the burst still waits; the admin's answer did not
