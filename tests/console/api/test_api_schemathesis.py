"""Property-based conformance of the agent API to its own OpenAPI document (schemathesis).

Schemathesis generates valid and invalid requests for every operation and checks: no 5xx, every
status code documented, every response body matching its schema and content type, required headers
present, and schema-invalid requests rejected. `positive_data_acceptance` is not checked: writing
rules (docs/spec/003-memory-system.md §9), allowlists and consent legitimately refuse some schema-valid requests.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from console.api import api
from models import create_admin, db
from models.admins.mechanic import decide_grant, request_grant
from models.changes.mutations import create_memory
from models.changes.patches import propose
from tests.api_support import bearer

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    negative_data_rejection,
]


@pytest.fixture
def api_world(app, make_agent):
    """A supervisor with memories (ids 1-6), patches, grants and a checkpoint, so generated ids hit rows."""
    app.config["API_FLUSH_SECONDS"] = 0  # flush bookkeeping on every request: exercise that path too
    agent = make_agent(role="supervisor")
    headers = bearer(agent)
    other = make_agent(role="supervisor")
    for i, category in enumerate(("profile", "goals", "preferences", "event", "activity", "tasks")):
        create_memory(agent.id, f"The user has fact number {i}.", actor="agent", memory_type="semantic",
                      category=category, user_id="u1", thread_id="t1", importance=1 + i % 5)  # fmt: skip
    create_memory(other.id, "Another agent's fact.", actor="agent", category="tasks")
    propose(agent.id, "create", "city", {"content": "The user lives in Oslo.", "category": "profile"})
    admin = create_admin("fuzz@example.com", "correct horse battery")
    grant = request_grant(agent.id, admin.id, "Checking a duplicate cluster.", "all", [], 10)
    decide_grant(grant.id, True, decided_by="test")
    db.session.commit()
    return headers


# The document is a pure function of the route declarations and models: no app, no database.
schema = schemathesis.openapi.from_dict(api.document())
schema.config.update(base_url="http://localhost/api/v1")
schema.config.generation.update(max_examples=40, deterministic=True)


@schema.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_api_conforms_to_its_openapi_document(case, app, api_world):
    case.call_and_validate(app=app, headers=api_world, checks=CHECKS)
