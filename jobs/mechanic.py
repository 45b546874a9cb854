"""The Mechanic's Exception, agent side: asking the agent's own model for consent, and closing lapsed grants.

Consent must be explicit. With a model configured, the agent's own model is asked (purpose, scope,
duration) and anything but a clear yes is a refusal. With no model (the offline refiner), there is
nobody to ask: the offline policy declines, unless the agent gave standing consent beforehand
through the agent API (`agents.mechanic_preconsent`).
"""

from __future__ import annotations

import json
import logging

from infra.queues import get_rq
from models import Agent, MechanicGrant, atomic, db
from models.admins.mechanic import MAX_GRANT_MINUTES, decide_grant, expire_grants
from models.errors import ValidationFailed

from .llm import missing_endpoint, model_configured, model_for, parse_consent

log = logging.getLogger(__name__)

PRECONSENT = "pre-consent"
OFFLINE_POLICY = "offline-policy"
MODEL = "model"
MODEL_ERROR = "model-error"

MECHANIC_CONSENT_PROMPT = """# A request to read your memory (the Mechanic's Exception)

A site admin asks to read the contents of your memory. Humans never read your memories routinely;
this exception is the only way, and it needs your explicit consent.

- Purpose, in the admin's words: {purpose}
- Scope: {scope}
- Duration: {minutes} minute(s) from your consent (at most {max_minutes}); the access then closes by itself.
- Every page the admin views is recorded in your audit log, and you can revoke the access at any time.

Do you consent? Answer with a JSON object and nothing else:
{{"consent": true or false, "reason": "one short sentence"}}"""


def consent_prompt(grant: MechanicGrant) -> str:
    if grant.scope == "all":
        scope = "all of your memories"
    else:
        scope = f"{len(grant.memory_ids)} listed memories: " + ", ".join(f"#{i}" for i in grant.memory_ids)
    return MECHANIC_CONSENT_PROMPT.format(
        purpose=json.dumps(grant.purpose, ensure_ascii=False),
        scope=scope,
        minutes=grant.duration_minutes,
        max_minutes=MAX_GRANT_MINUTES,
    )


def _decide(grant_id: int, consent: bool, reason: str, decided_by: str) -> MechanicGrant:
    """Record the answer, unless the grant stopped pending meanwhile (revoked while the model thought)."""
    try:
        return decide_grant(grant_id, consent, reason=reason, decided_by=decided_by)
    except ValidationFailed:
        db.session.rollback()
        grant = db.session.get(MechanicGrant, grant_id)
        if grant is not None and grant.status != "pending":
            return grant
        raise


def ask_mechanic_consent(grant_id: int) -> dict:
    """RQ job on the `interactive` queue: ask the agent whether an admin may read its memory, and record the answer.

    Safe to re-run: a grant no longer pending is left as it is. A model that fails to answer counts as
    a refusal (recorded), and the job still raises so RQ records the failure.
    """
    grant = db.session.get(MechanicGrant, grant_id)
    if grant is None:
        raise LookupError(f"mechanic grant {grant_id} not found")
    if grant.status != "pending":
        return {"grant_id": grant.id, "status": grant.status, "decided_by": grant.decided_by}
    agent = db.session.get(Agent, grant.agent_id)
    if agent is None or not agent.active:
        grant = _decide(grant.id, False, reason="the agent is inactive", decided_by=OFFLINE_POLICY)
    elif not model_configured(agent):
        if agent.mechanic_preconsent:
            grant = _decide(
                grant.id, True, reason="standing consent given through the agent API", decided_by=PRECONSENT
            )
        else:
            # A model named but unreachable is said so (without the setting details: the reason is shown on
            # the console and to the agent); either way no one could be asked, so only standing consent counts.
            reason = (
                "its model cannot be called (no endpoint configured) and no standing consent"
                if missing_endpoint(agent)
                else "no model to ask and no standing consent"
            )
            grant = _decide(grant.id, False, reason=reason, decided_by=OFFLINE_POLICY)
    else:
        try:
            turn = model_for(agent).turn([{"role": "user", "content": consent_prompt(grant)}], None)
        except Exception as err:
            db.session.rollback()
            _decide(
                grant_id,
                False,
                reason=f"the model did not answer ({type(err).__name__})",
                decided_by=MODEL_ERROR,
            )
            log.warning("mechanic consent: model error %s for grant %s", type(err).__name__, grant_id)
            raise
        agreed, reason = parse_consent(turn)
        grant = _decide(grant.id, agreed, reason=reason, decided_by=MODEL)
    log.info("mechanic grant %s %s by %s", grant.id, grant.status, grant.decided_by)
    return {"grant_id": grant.id, "status": grant.status, "decided_by": grant.decided_by}


def enqueue_consent(grant_id: int) -> str:
    """Queue the consent question and note the job on the grant. An admin is waiting on the grant's
    page for the answer, so it goes on `interactive`, ahead of any burst of scheduled model work."""
    job = get_rq().enqueue(
        ask_mechanic_consent, grant_id, queue="interactive", job_id=f"mechanic-consent-{grant_id}"
    )
    with atomic():
        db.session.get_one(MechanicGrant, grant_id).job_id = job.id
    return job.id


def expire_lapsed_grants() -> dict:
    """Recurring (every 5 minutes): mark lapsed grants expired. Their use is refused on every request anyway."""
    expired = expire_grants()
    log.info("mechanic grants expired: %d", expired)
    return {"expired": expired}
