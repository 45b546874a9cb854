"""One config object. Values come from the environment (or a mapping passed to create_app)."""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from typing import Any


class Config:
    """Defaults are safe for a single-machine demo; production sets DATABASE_URL, REDIS_URL, SECRET_KEY."""

    def __init__(self, instance_path: str, overrides: dict[str, Any] | None = None) -> None:
        env = os.environ
        overrides = overrides or {}
        self.SECRET_KEY = env.get("SECRET_KEY") or _instance_secret(instance_path)
        self.SQLALCHEMY_DATABASE_URI = normalise_database_url(
            env.get("DATABASE_URL") or f"sqlite:///{os.path.join(instance_path, 'memory-console.db')}"
        )
        # Unset: use a Redis on 127.0.0.1:6379 if one answers, else start the embedded one.
        # "embedded" forces the embedded server (tests, demo).
        self.REDIS_URL = env.get("REDIS_URL") or None
        # Redis through Sentinel (docs/how-to/scaling-out.md, "Redis through Sentinel"): when set, REDIS_URL
        # is not used for the queues.
        self.REDIS_SENTINELS = env.get("REDIS_SENTINELS") or None
        self.REDIS_SENTINEL_MASTER = env.get("REDIS_SENTINEL_MASTER", "mymaster")
        self.REDIS_SENTINEL_DB = int(env.get("REDIS_SENTINEL_DB", 0))
        # Connect and read timeout of every Redis connection (the queues', the rate limiter's): a Redis that
        # stops answering costs a request at most about this long (docs/explanation/security.md).
        self.REDIS_TIMEOUT_SECONDS = float(env.get("REDIS_TIMEOUT_SECONDS", 1.0))
        self.SQLALCHEMY_ENGINE_OPTIONS: dict[str, Any] = {"pool_pre_ping": True}
        self.SESSION_COOKIE_HTTPONLY = True
        self.SESSION_COOKIE_SAMESITE = "Lax"
        self.SESSION_COOKIE_SECURE = env.get("SESSION_COOKIE_SECURE", "0") == "1"
        self.REMEMBER_COOKIE_HTTPONLY = True
        # Sign-in (docs/explanation/security.md): a session lasts at most this long, and ends sooner when
        # idle.
        self.PERMANENT_SESSION_LIFETIME = timedelta(
            seconds=int(env.get("PERMANENT_SESSION_LIFETIME", 12 * 3600))
        )
        self.SESSION_IDLE_MINUTES = float(env.get("SESSION_IDLE_MINUTES", 30))
        # Rate limits (Flask-Limiter): failed sign-ins per client address and per email tried, and
        # agent API calls per token. Storage: RATELIMIT_STORAGE_URI, else the app's Redis (console/limits.py).
        self.RATELIMIT_ENABLED = env.get("RATELIMIT_ENABLED", "1") == "1"
        self.RATELIMIT_STORAGE_URI = env.get("RATELIMIT_STORAGE_URI") or None
        # X-RateLimit-Limit / -Remaining / -Reset on every limited response: two more Redis round trips
        # per call, so off unless asked for; a 429 always carries Retry-After (console/limits.py).
        self.RATELIMIT_HEADERS_ENABLED = env.get("RATELIMIT_HEADERS_ENABLED", "0") == "1"
        self.LOGIN_RATE_LIMIT = env.get("LOGIN_RATE_LIMIT", "5/minute;30/hour")
        self.API_RATE_LIMIT = env.get("API_RATE_LIMIT", "600/minute")
        # Agent API bookkeeping (last-access touches, search events) is written in batches this often.
        self.API_FLUSH_SECONDS = float(env.get("API_FLUSH_SECONDS", 2.0))
        # Storage quotas per agent (models/agents/quotas.py).
        self.MAX_MEMORIES_PER_AGENT = int(env.get("MAX_MEMORIES_PER_AGENT", 100_000))
        # The retention guard (models/changes/retention.py): an agent's own core deletions outside a session
        # within this window may not take it below its min_retention share; 0 turns it off. The first
        # RETENTION_GUARD_FREE_DELETES core deletions of a window always pass.
        self.RETENTION_GUARD_WINDOW_HOURS = float(env.get("RETENTION_GUARD_WINDOW_HOURS", 24))
        self.RETENTION_GUARD_FREE_DELETES = int(env.get("RETENTION_GUARD_FREE_DELETES", 5))
        self.MAX_CHECKPOINT_BYTES_PER_AGENT = int(env.get("MAX_CHECKPOINT_BYTES_PER_AGENT", 64 * 1024 * 1024))
        # Workers take queues in this order (docs/reference/jobs.md, "Queues"): an admin's own request first,
        # so a burst of scheduled or background work never delays it.
        self.RQ_QUEUES = ("interactive", "default", "llm", "maintenance")
        # Refinement sessions: bounds on the model loop and the single-flight lock.
        self.REFINEMENT_MAX_TURNS = int(env.get("REFINEMENT_MAX_TURNS", 30))
        self.REFINEMENT_WALL_SECONDS = float(env.get("REFINEMENT_WALL_SECONDS", 900))
        self.REFINEMENT_LOCK_TTL = float(env.get("REFINEMENT_LOCK_TTL", 30))
        # A ledger larger than this many tokens is shown in pages (docs/explanation/refinement.md, "Large
        # ledgers"): sized for a 128k-token model, leaving ~80k for the rules, the tools and up to 30 turns of
        # conversation.
        self.REFINEMENT_LEDGER_MAX_TOKENS = int(env.get("REFINEMENT_LEDGER_MAX_TOKENS", 48_000))
        # Recurring jobs (jobs/schedule.py): a cron string (UTC) or an interval in minutes each; checked here,
        # so a bad value stops the app at start with the setting's name, and reconciled by `rq scheduler`.
        for name, default in SCHEDULE_DEFAULTS.items():
            value = env.get(name, default)
            minutes = name.endswith("_MINUTES") and str(value).strip().isdigit()
            setattr(self, name, int(value) if minutes else value)
        self.LLM_TIMEOUT = float(env.get("LLM_TIMEOUT", 120))
        self.LLM_MAX_RETRIES = int(env.get("LLM_MAX_RETRIES", 4))
        self.LLM_OFFLINE = env.get("LLM_OFFLINE", "0") == "1"
        # The default endpoint for agents' models (an agent's own base_url wins) and its key; the key also
        # serves the embeddings endpoint.
        self.OPENAI_BASE_URL = env.get("OPENAI_BASE_URL") or None
        self.OPENAI_API_KEY = env.get("OPENAI_API_KEY") or None
        # Dense vectors for memory.query (jobs/embeddings.py): auto, endpoint, local or hashed.
        self.EMBEDDINGS = env.get("EMBEDDINGS", "auto").lower()
        self.EMBEDDINGS_MODEL = env.get("EMBEDDINGS_MODEL") or None
        self.EMBEDDINGS_BASE_URL = env.get("EMBEDDINGS_BASE_URL") or None
        # A request embedding its question gives up on the endpoint after this long and ranks lexically.
        self.QUERY_EMBEDDING_TIMEOUT = float(env.get("QUERY_EMBEDDING_TIMEOUT", 5))
        # Per-process cache of agents' vector matrices (models/retrieval/vectors.py), in MB.
        self.VECTOR_CACHE_MB = float(env.get("VECTOR_CACHE_MB", 512))
        # memory.query lets in what a question asks once its best hit is found (models/retrieval/rest.py):
        # recall on questions about a user's other facts, for about 1 ms a question; off by default.
        self.QUERY_REST = env.get("QUERY_REST", "0") == "1"
        # Where memory.query finds an agent's nearest vectors (models/retrieval/pgvector.py, `serves`): "auto",
        # pgvector's HNSW index for agents whose matrix alone would outgrow VECTOR_CACHE_MB, where the database
        # has the index; "pgvector", for every agent where it has; "matrix", the matrices only.
        self.VECTOR_SEARCH = env.get("VECTOR_SEARCH", "auto").lower()
        # Background memory work (docs/spec/003-memory-system.md): thresholds, caps and the optional write paths.
        self.TTL_IMPORTANCE_BELOW = int(env.get("TTL_IMPORTANCE_BELOW", 3))
        self.CONSOLIDATION_PAIRS_PER_DAY = int(env.get("CONSOLIDATION_PAIRS_PER_DAY", 50))
        self.CONSOLIDATION_TOKEN_BUDGET = int(env.get("CONSOLIDATION_TOKEN_BUDGET", 20_000))
        self.RELATIONS_LINK_MIN = float(env.get("RELATIONS_LINK_MIN", 0.6))
        self.RELATIONS_TOP_K = int(env.get("RELATIONS_TOP_K", 5))
        self.PROCEDURAL_MEMORY = env.get("PROCEDURAL_MEMORY", "0") == "1"
        self.MULTI_FACT_EXTRACTION = env.get("MULTI_FACT_EXTRACTION", "0") == "1"
        # PostgreSQL's monthly history partitions (models/history/partitions.py): the maintenance job keeps the
        # current month's and this many months after it created.
        self.HISTORY_PARTITIONS_AHEAD = int(env.get("HISTORY_PARTITIONS_AHEAD", 3))
        # Memory categories and per-role allowlists (models/memories/categories.py): the shipped file unless set.
        self.CATEGORY_CONFIG = env.get("CATEGORY_CONFIG") or SHIPPED_CATEGORY_CONFIG
        # GET /api/v1/context (docs/reference/api.md, "Context block"): the journals of this many days join
        # the core memories.
        self.CONTEXT_JOURNAL_DAYS = int(env.get("CONTEXT_JOURNAL_DAYS", 7))
        # Each web process keeps every agent's last rendered block up to this many MB (console/api/context_cache.py).
        self.CONTEXT_CACHE_MB = float(env.get("CONTEXT_CACHE_MB", 64))
        for key, value in overrides.items():
            setattr(self, key, value)
        if "DATABASE_URL" in overrides:
            self.SQLALCHEMY_DATABASE_URI = normalise_database_url(overrides["DATABASE_URL"])
        # A streaming replica for console pages and memory.query reads (models/db.py, "read replica").
        replica = overrides.get("DATABASE_REPLICA_URL", env.get("DATABASE_REPLICA_URL"))
        self.DATABASE_REPLICA_URL = replica or None
        if replica:
            self.SQLALCHEMY_BINDS = {"replica": normalise_database_url(replica)}
        if (
            self.SQLALCHEMY_DATABASE_URI.startswith("postgresql")
            and "connect_args" not in self.SQLALCHEMY_ENGINE_OPTIONS
        ):
            # A database host that stops answering is a 503 within seconds, not a hung worker.
            self.SQLALCHEMY_ENGINE_OPTIONS = {
                **self.SQLALCHEMY_ENGINE_OPTIONS,
                "connect_args": {"connect_timeout": 5},
            }
        for name in SCHEDULE_DEFAULTS:
            schedule_cron(name, getattr(self, name))
        ahead = self.HISTORY_PARTITIONS_AHEAD
        if isinstance(ahead, bool) or not isinstance(ahead, int) or not 1 <= ahead <= 24:
            # 0 would leave the first hours of each month, before the job runs, to the default partition.
            raise ValueError(
                f"HISTORY_PARTITIONS_AHEAD must be a whole number of months from 1 to 24, not {ahead!r}"
            )
        if self.VECTOR_SEARCH not in ("auto", "pgvector", "matrix"):
            raise ValueError(f"VECTOR_SEARCH must be auto, pgvector or matrix, not {self.VECTOR_SEARCH!r}")
        if self.SQLALCHEMY_DATABASE_URI.startswith("sqlite"):
            # SQLite enforces foreign keys and waits for the writer instead of failing at once.
            self.SQLALCHEMY_ENGINE_OPTIONS = {"connect_args": {"timeout": 30}}

    def as_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if k.isupper()}


# The category allowlists that ship with the console (package data of `console`).
SHIPPED_CATEGORY_CONFIG = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "console", "allowlists.yaml"
)

# The timing of every recurring job: `*_CRON` is a cron string read as UTC, `*_MINUTES` an interval in minutes.
SCHEDULE_DEFAULTS: dict[str, str | int] = {
    "REFINEMENT_CRON": "0 4 * * 1",  # the weekly sweep: Monday 04:00
    "OVER_BUDGET_SCAN_MINUTES": 15,
    "DEDUP_CRON": "30 2 * * *",
    "TTL_CRON": "0 3 * * *",
    "PATCH_EXPIRY_CRON": "15 3 * * *",
    "CONSOLIDATION_CRON": "0 5 * * *",
    "TOM_INSIGHTS_CRON": "0 6 * * *",
    "REFLECTION_CRON": "30 6 * * *",
    "RELATIONS_CATCH_UP_MINUTES": 10,
    "SESSION_RECONCILE_MINUTES": 5,
    "MECHANIC_EXPIRY_MINUTES": 5,
    "HISTORY_PARTITIONS_CRON": "45 3 * * *",
}


def schedule_cron(name: str, value: object) -> str:
    """The cron string a schedule setting stands for; ValueError naming the setting when it is not one.

    An interval of N minutes is `*/N * * * *` (runs at the minutes of the hour divisible by N, so values
    that divide 60 are evenly spaced); 60 is hourly, on the hour."""
    from crontab import CronTab  # rq-scheduler's own cron parser

    if name.endswith("_MINUTES"):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 60:
            raise ValueError(f"{name} must be a whole number of minutes from 1 to 60, not {value!r}")
        return "0 * * * *" if value == 60 else f"*/{value} * * * *"
    if not isinstance(value, str) or len(value.split()) != 5:
        raise ValueError(
            f"{name} must be a cron string of five fields (minute hour day month weekday), not {value!r}"
        )
    try:
        CronTab(value)
    except ValueError as err:
        raise ValueError(f"{name}: {value!r} is not a valid cron string ({err})") from None
    return " ".join(value.split())


def normalise_database_url(url: str) -> str:
    """postgres:// and postgresql:// both mean psycopg 3 here."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _instance_secret(instance_path: str) -> str:
    """A random key kept in instance/ so sessions survive restarts without a committed secret."""
    path = os.path.join(instance_path, "secret_key")
    if os.path.exists(path):
        with open(path) as fh:
            return fh.read().strip()
    os.makedirs(instance_path, exist_ok=True)
    key = secrets.token_hex(32)
    with open(path, "w") as fh:
        fh.write(key)
    os.chmod(path, 0o600)
    return key
