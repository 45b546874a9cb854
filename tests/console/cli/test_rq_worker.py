"""`rq worker`'s AppWorker (console/cli/rq.py): a worker's exit is never held by RQ's command listener."""

from __future__ import annotations

import threading
import time
import uuid

from rq import Queue

from console.cli.rq import AppWorker


def test_a_worker_stops_its_command_listener_at_once_when_the_listener_took_the_unsubscribe_reply_first(
    redis_conn,
):
    """On exit RQ unsubscribes, then stops the listener, and redis-py waits for the listener to end. Where the
    listener has already taken the unsubscribe's reply and gone back to waiting (forced here by stopping it a
    moment late), only its next wake ends it: RQ's 60 s had held a burst worker's exit for a minute
    (tests/models/refinement/test_refinement_processes.py failed on it); AppWorker's wake ends it within
    seconds."""
    worker = AppWorker(
        [Queue("llm", connection=redis_conn)], connection=redis_conn, name=f"w-{uuid.uuid4().hex}"
    )
    worker.subscribe()
    stop = worker.pubsub_thread.stop

    def late_stop(*args, **kwargs):
        deadline = time.monotonic() + 10
        while worker.pubsub.subscribed and time.monotonic() < deadline:  # the listener takes the reply
            time.sleep(0.01)
        time.sleep(0.3)  # and waits again
        return stop(*args, **kwargs)

    worker.pubsub_thread.stop = late_stop
    exiting = threading.Thread(target=worker.unsubscribe, daemon=True)
    exiting.start()
    exiting.join(timeout=15)
    assert not exiting.is_alive(), "the worker's exit waited on its command listener"
    assert not worker.pubsub.subscribed
