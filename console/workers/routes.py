from __future__ import annotations

import logging

from redis.exceptions import RedisError

from console.queues import get_rq
from console.web.htmx import render

from . import bp
from .board import failure_rows, queue_rows, recurring_rows, worker_rows

log = logging.getLogger(__name__)


@bp.get("/jobs")
def index():
    """Queues, workers, the recurring schedule and recent failures. No job arguments, results or messages."""
    rq = get_rq()
    try:
        context = {
            "queues": queue_rows(rq),
            "workers": worker_rows(rq),
            "recurring": recurring_rows(rq),
            "failures": failure_rows(rq),
            "unreachable": False,
        }
    except (RedisError, OSError) as err:
        log.warning("jobs page: Redis unreachable (%s)", type(err).__name__)
        context = {"queues": [], "workers": [], "recurring": [], "failures": [], "unreachable": True}
    return render("workers/index.html", **context)
