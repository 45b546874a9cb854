"""What Redis keeps of a job that a person or a log could see, for the tests that look for memory text in it
(tests/jobs/test_log_canary.py, tests/jobs/test_recurring_jobs_log_canary.py)."""

from __future__ import annotations

from rq.job import Job


def visible(job: Job) -> str:
    """The job's description, arguments and failure, as Redis keeps them now."""
    job.refresh()
    result = job.latest_result()
    return " ".join(
        [job.description or "", repr(job.args), repr(job.kwargs), getattr(result, "exc_string", "") or ""]
    )
