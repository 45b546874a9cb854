"""No 5xx from any GET route, whatever its path and query arguments (docs/explanation/security.md).

Every GET rule of `app.url_map` — console pages as a signed-in admin, the agent API with a bearer
token, the public pages as anyone — is called with hostile path segments (ids past PostgreSQL's
`integer`, negative, non-ASCII digits, NUL, very long) and query strings (times with extreme
offsets or out of the calendar, huge numbers, NUL, random text, under every parameter name the
routes read). First a fixed sweep of every rule with the values that used to reach 500, then
hypothesis draws from all of them and from random text, numbers and times.
Runs on both databases with the rest of the suite.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.changes.mutations import soft_delete_memories
from models.parsing import MAX_ID
from tests.api_support import bearer
from tests.browser.support import make_admin, signed_in

HOSTILE = [
    "0",
    "-1",
    str(MAX_ID),
    str(MAX_ID + 1),
    "9" * 30,
    "9" * 5000,
    "١٢",
    "²",
    "1e309",
    "NaN",
    "",
    " ",
    "\x00",
    "a\x00b",
    "%00",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "0000-00-00",
    "2026-02-30",
    "2026-11-22T04:00:00Z",
    "é" * 300,
    "'; DROP TABLE agents; --",
    "%_\\",
    "../../etc/passwd",
    "<script>",
]
# Bytes that are not UTF-8 at all, sent as they are (already percent-encoded).
RAW = ["%ff%fe", "%c0%80", "%ed%a0%80"]
# Every query parameter a GET route reads today, and a few it does not.
PARAMS = ["q", "page", "to", "before", "memory", "ids", "state", "type", "sort", "dir", "locked",
          "user_id", "limit", "next", "zone", "since_rev", "nope"]  # fmt: skip


def _get_rules(app):
    return sorted(
        (rule for rule in app.url_map.iter_rules() if "GET" in rule.methods and rule.endpoint != "static"),
        key=lambda rule: rule.rule,
    )


def _url(rule, segments: dict[str, str], args: dict[str, str], raw: bool = False) -> str:
    encode = (lambda v: v) if raw else (lambda v: quote(v, safe=""))
    path = rule.rule
    for name in rule.arguments:
        path = re.sub(rf"<(?:[^:>]+:)?{name}>", encode(segments.get(name, "1")), path)
    query = "&".join(f"{encode(k)}={encode(v)}" for k, v in args.items())
    return path + ("?" + query if query else "")


@pytest.fixture
def callers(app, redis_conn, make_agent, make_memory):
    """The console as a signed-in admin, the API as an agent with real rows to find, anyone else."""
    app.config["API_RATE_LIMIT"] = "1000000/minute"  # this test calls thousands of times on purpose
    make_admin()
    agent = make_agent("fuzzed", role="supervisor")
    memories = [make_memory(agent, f"fact number {n}", category="preferences") for n in range(3)]
    soft_delete_memories(agent.id, [memories[2].id], actor="admin:test")
    admin = signed_in(app)
    api = app.test_client()
    headers = bearer(agent)
    anyone = app.test_client()

    def call(rule, url: str):
        if rule.rule.startswith("/api/"):
            return api.get(url, headers=headers)
        if rule.endpoint in ("healthz", "readyz", "auth.login", "auth.login_code"):
            return anyone.get(url)
        return admin.get(url)

    return call, [str(agent.id), str(memories[0].id), str(memories[2].id)]


def _no_5xx(call, rule, url: str) -> None:
    response = call(rule, url)
    assert response.status_code < 500, (url, response.status_code, response.get_data(as_text=True)[:300])


# The fixed sweep: the values that reached 500 before (docs/explanation/security.md), a few of each kind.
SWEEP_PATHS = [str(MAX_ID + 1), "9" * 5000, "١٢", "a\x00b"]
SWEEP_QUERIES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "9" * 30, "\x00", "é" * 300]


def test_every_get_route_survives_every_hostile_value(app, callers):
    call, real_ids = callers
    for rule in _get_rules(app):
        if rule.arguments:
            for value in SWEEP_PATHS:
                _no_5xx(call, rule, _url(rule, dict.fromkeys(rule.arguments, value), {}))
            _no_5xx(call, rule, _url(rule, dict.fromkeys(rule.arguments, RAW[0]), {}, raw=True))
        # Every parameter name at once, on a path that names real rows.
        real = dict.fromkeys(rule.arguments, real_ids[0])
        for value in SWEEP_QUERIES:
            _no_5xx(call, rule, _url(rule, real, dict.fromkeys(PARAMS, value)))
        _no_5xx(call, rule, _url(rule, real, dict.fromkeys(PARAMS, RAW[0]), raw=True))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_get_route_answers_5xx_to_random_arguments(app, callers, data):
    call, real_ids = callers
    rule = data.draw(st.sampled_from(_get_rules(app)), label="rule")
    value = st.one_of(
        st.sampled_from(HOSTILE + real_ids),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=40),  # lone surrogates: RAW above
        st.datetimes().map(lambda d: d.isoformat())
        | st.builds(
            lambda d, h, m: f"{d.isoformat()}{'+' if h >= 0 else '-'}{abs(h):02d}:{m:02d}",
            st.datetimes(),
            st.integers(-23, 23),
            st.sampled_from([0, 30, 45, 59]),
        ),
    )
    segments = {
        name: data.draw(value.filter(lambda v: v.strip() != "" and v not in (".", "..")), label=name)
        for name in rule.arguments
    }
    args = data.draw(
        st.dictionaries(
            st.sampled_from(PARAMS) | st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
            value,
            max_size=4,
        ),
        label="args",
    )
    _no_5xx(call, rule, _url(rule, segments, args))
