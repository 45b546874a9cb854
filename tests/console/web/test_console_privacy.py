"""Silo privacy (invariant 6), proven by a crawl.

A unique canary is planted in every place memory text or agent-authored words live: memory contents
(active, constitutional, journal, edited, deleted, merged, another agent's), audit before/after text,
free-form audit data, a deletion reason, a session summary, the agent's own refinement prompt, a
consent reason from the model, and failed jobs (one whose message spans lines). Then, signed in as an
admin, the crawl visits every GET route of the url map with every id it takes, and every URL found in
an `href` or `hx-get` on the pages it sees (htmx-requested ones as htmx would ask for them), and
checks each response's body and headers, and the log.

Without a grant the canary appears nowhere; with a grant only the markers of memories in its scope
appear, and only on pages that recorded the view; after expiry or revocation, nowhere again.
"""

from __future__ import annotations

import html
import logging
import re
import uuid
from collections import deque
from datetime import timedelta

import pytest
import sqlalchemy as sa
from rq import SimpleWorker

from models import MechanicGrant, MechanicView, RefinementSession, db, utcnow
from models.admins.mechanic import decide_grant, request_grant, revoke_grant
from models.changes.agent_settings import set_refinement_prompt
from models.changes.mutations import consolidate_memories, create_memory, soft_delete_memories, update_memory
from tests.browser.support import make_admin, signed_in
from tests.job_fixtures import explode

CANARY = "CANARY" + uuid.uuid4().hex[:12]
FOUND = re.compile(re.escape(CANARY) + r"-(\w+)-")
LINK = re.compile(r'(?:href|hx-get)="([^"]+)"')
HX_LINK = re.compile(r'hx-get="([^"]+)"')
MAX_REQUESTS = 4000
# Never memory content: these must not appear even under a grant.
NOT_CONTENT = {"data", "reason", "summary", "prompt", "consent", "job", "jobline"}


def mark(name: str, filler: str = "") -> str:
    return f"{CANARY}-{name}- {filler}".strip()


@pytest.fixture
def world(app, make_agent, redis_conn):
    """Plant the canary everywhere; return the ids and which markers belong to which memory."""
    admin = make_admin()
    target, other = make_agent("target"), make_agent("other")
    memories = {
        "core": create_memory(target.id, mark("core", "The user's home address."), actor="agent"),
        "locked": create_memory(
            target.id, mark("locked", "Never forget this."), actor="admin:seed", constitutional=True
        ),
        "journal": create_memory(
            target.id, "Refinement session: " + mark("journal"), actor="agent", memory_type="journal"
        ),
        "edited": create_memory(target.id, mark("edited_old"), actor="agent", data={"note": mark("data")}),
        "deleted": create_memory(target.id, mark("deleted"), actor="agent"),
        "dup1": create_memory(target.id, mark("dup", "one"), actor="agent"),
        "dup2": create_memory(target.id, mark("dup", "two"), actor="agent"),
        "other": create_memory(other.id, mark("other"), actor="agent"),
    }
    update_memory(target.id, memories["edited"].id, actor="agent", content=mark("edited_new"))
    soft_delete_memories(target.id, [memories["deleted"].id], actor="agent", reason=mark("reason"))
    session = RefinementSession(agent_id=target.id, trigger="test", status="running", started_at=utcnow())
    db.session.add(session)
    db.session.commit()
    merged = consolidate_memories(
        target.id,
        [memories["dup1"].id, memories["dup2"].id],
        mark("merged"),
        actor="agent",
        session_id=session.id,
    )
    memories["merged"] = merged
    session.status, session.finished_at, session.ops_count = "completed", utcnow(), 1
    session.summary = mark("summary")
    session.tokens_before, session.tokens_after = 100, 90
    db.session.commit()
    set_refinement_prompt(target.id, mark("prompt"))
    declined = request_grant(target.id, admin.id, "A purpose of reasonable length", "all", [], 5)
    decide_grant(declined.id, False, reason=mark("consent"), decided_by="model")
    rq = app.extensions["rq"]
    rq.enqueue(explode, mark("job"), queue="default")
    rq.enqueue(explode, "boom\n" + mark("jobline"), queue="llm")
    SimpleWorker([rq.queue("default"), rq.queue("llm")], connection=redis_conn).work(burst=True)
    markers = {
        "core": {"core"},
        "locked": {"locked"},
        "journal": {"journal"},
        "edited": {"edited_old", "edited_new"},
        "deleted": {"deleted"},
        "dup1": {"dup"},
        "dup2": {"dup"},
        "merged": {"merged"},
        "other": {"other"},
    }
    return {
        "admin": admin,
        "target": target,
        "other": other,
        "memories": memories,
        "markers": markers,
        "session": session,
    }


def _ids() -> dict[str, list]:
    def column(sql: str) -> list:
        return list(db.session.scalars(sa.text(sql)))

    return {
        "agent_id": column("SELECT id FROM agents"),
        "session_id": column("SELECT id FROM refinement_sessions"),
        "grant_id": column("SELECT id FROM mechanic_grants"),
        "memory_id": column("SELECT id FROM agent_memories"),
        "op_id": column("SELECT DISTINCT op_id FROM audit_logs"),
    }


def _seeds(app) -> list[str]:
    ids = _ids()
    seeds = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.endpoint == "static":
            continue
        combos: list[dict] = [{}]
        for arg in sorted(rule.arguments):
            values = ids.get(arg)
            if values is None:  # an id kind the crawl does not know: try every integer id there is
                values = sorted(
                    {v for key in ("agent_id", "session_id", "grant_id", "memory_id") for v in ids[key]}
                )
            combos = [{**combo, arg: value} for combo in combos for value in values]
        for combo in combos:
            url = rule.rule
            for arg, value in combo.items():
                url = re.sub(rf"<(?:\w+:)?{arg}>", str(value), url)
            seeds.append(url)
    return seeds


def crawl(app, client) -> dict[str, set[str]]:
    """Visit every seed and every same-site link; return {url: canary markers found} (body and headers)."""
    found: dict[str, set[str]] = {}
    queue = deque((url, False) for url in _seeds(app))
    seen = set(queue)
    requests = 0
    while queue:
        url, as_htmx = queue.popleft()
        requests += 1
        assert requests <= MAX_REQUESTS, "the crawl does not converge"
        response = client.get(url, headers={"HX-Request": "true"} if as_htmx else {})
        text = response.get_data(as_text=True)
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        markers = set(FOUND.findall(text + headers))
        if CANARY in text + headers and not markers:
            markers = {"unlabelled"}
        if markers:
            found[f"{'hx ' if as_htmx else ''}{url}"] = markers
        if not response.content_type.startswith("text/html"):
            continue
        hx_links = {html.unescape(u) for u in HX_LINK.findall(text)}
        for link in {html.unescape(u) for u in LINK.findall(text)}:
            if not link.startswith("/") or link.startswith("//") or link.startswith("/static/"):
                continue
            for variant in ((link, False), (link, True)) if link in hx_links else ((link, False),):
                if variant not in seen:
                    seen.add(variant)
                    queue.append(variant)
    assert requests > 50, "the crawl saw too little to prove anything"
    return found


def test_the_canary_appears_nowhere_without_a_grant_only_in_scope_with_one_and_nowhere_after(
    app, world, caplog
):
    caplog.set_level(logging.DEBUG)
    client = signed_in(app)
    target, memories, markers = world["target"], world["memories"], world["markers"]

    # 1. No grant: nothing, anywhere.
    assert crawl(app, client) == {}

    # 2. A live grant on two memories: only their markers, only on pages that recorded a view.
    scope = [memories["edited"].id, memories["merged"].id]
    grant = request_grant(
        target.id, world["admin"].id, "Check two memories a user reported", "ids", scope, 10
    )
    decide_grant(grant.id, True, decided_by="pre-consent")
    views_before = db.session.scalar(sa.select(sa.func.count()).select_from(MechanicView))
    found = crawl(app, client)
    allowed = markers["edited"] | markers["merged"]
    shown = set().union(*found.values()) if found else set()
    assert shown == allowed, found  # every in-scope text was reachable, and nothing else was
    for url in found:
        path = url.removeprefix("hx ")
        assert path.startswith(
            (f"/mechanic/grants/{grant.id}", f"/agents/{target.id}/audit", "/sessions/")
        ), url
    views = db.session.scalars(sa.select(MechanicView).where(MechanicView.id > views_before)).all()
    viewed_paths = {v.path.rstrip("?") for v in views}
    for url in found:
        assert url.removeprefix("hx ") in viewed_paths, f"{url} showed text without recording the view"
    assert all(set(v.memory_ids) <= set(scope) for v in views)

    # 3. A grant on all of the agent's memories still shows nothing that is not its memory text.
    revoke_grant(grant.id, actor="agent", agent_id=target.id)
    whole = request_grant(
        target.id, world["admin"].id, "Review the whole memory of this agent", "all", [], 10
    )
    decide_grant(whole.id, True, decided_by="pre-consent")
    found = crawl(app, client)
    shown = set().union(*found.values())
    own = set().union(*(m for name, m in markers.items() if name != "other"))
    assert shown == own and not shown & NOT_CONTENT and "other" not in shown

    # 4. Expired: nothing again, on any page, without anyone clicking anything.
    db.session.get(MechanicGrant, whole.id).expires_at = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert crawl(app, client) == {}

    # 5. Revoked by the agent: nothing.
    last = request_grant(
        target.id, world["admin"].id, "One more look at the edited memory", "ids", scope[:1], 10
    )
    decide_grant(last.id, True, decided_by="pre-consent")
    revoke_grant(last.id, actor="agent", agent_id=target.id)
    assert crawl(app, client) == {}

    assert CANARY not in caplog.text
