"""One config object. Values come from the environment (or a mapping passed to create_app)."""

from __future__ import annotations

import os
import secrets


class Config:
    """Defaults are safe for a single-machine demo; production sets DATABASE_URL, REDIS_URL, SECRET_KEY."""

    def __init__(self, instance_path: str, overrides: dict | None = None) -> None:
        env = os.environ
        self.SECRET_KEY = env.get("SECRET_KEY") or _instance_secret(instance_path)
        self.SQLALCHEMY_DATABASE_URI = normalise_database_url(
            env.get("DATABASE_URL") or f"sqlite:///{os.path.join(instance_path, 'memory-console.db')}"
        )
        # Unset: use a Redis on 127.0.0.1:6379 if one answers, else start the embedded one.
        # "embedded" forces the embedded server (tests, demo).
        self.REDIS_URL = env.get("REDIS_URL") or None
        self.SQLALCHEMY_ENGINE_OPTIONS = {"pool_pre_ping": True}
        self.SESSION_COOKIE_HTTPONLY = True
        self.SESSION_COOKIE_SAMESITE = "Lax"
        self.SESSION_COOKIE_SECURE = env.get("SESSION_COOKIE_SECURE", "0") == "1"
        self.REMEMBER_COOKIE_HTTPONLY = True
        self.RQ_QUEUES = ("default", "llm", "maintenance")
        # Refinement sessions: bounds on the model loop and the single-flight lock.
        self.REFINEMENT_MAX_TURNS = int(env.get("REFINEMENT_MAX_TURNS", 30))
        self.REFINEMENT_WALL_SECONDS = float(env.get("REFINEMENT_WALL_SECONDS", 900))
        self.REFINEMENT_LOCK_TTL = float(env.get("REFINEMENT_LOCK_TTL", 30))
        self.LLM_TIMEOUT = float(env.get("LLM_TIMEOUT", 120))
        self.LLM_MAX_RETRIES = int(env.get("LLM_MAX_RETRIES", 4))
        self.LLM_OFFLINE = env.get("LLM_OFFLINE", "0") == "1"
        # Background memory work (spec 003): thresholds, caps and the optional write paths.
        self.TTL_IMPORTANCE_BELOW = int(env.get("TTL_IMPORTANCE_BELOW", 3))
        self.CONSOLIDATION_PAIRS_PER_DAY = int(env.get("CONSOLIDATION_PAIRS_PER_DAY", 50))
        self.CONSOLIDATION_TOKEN_BUDGET = int(env.get("CONSOLIDATION_TOKEN_BUDGET", 20_000))
        self.RELATIONS_LINK_MIN = float(env.get("RELATIONS_LINK_MIN", 0.6))
        self.RELATIONS_TOP_K = int(env.get("RELATIONS_TOP_K", 5))
        self.PROCEDURAL_MEMORY = env.get("PROCEDURAL_MEMORY", "0") == "1"
        self.MULTI_FACT_EXTRACTION = env.get("MULTI_FACT_EXTRACTION", "0") == "1"
        for key, value in (overrides or {}).items():
            setattr(self, key, value)
        if "DATABASE_URL" in (overrides or {}):
            self.SQLALCHEMY_DATABASE_URI = normalise_database_url(overrides["DATABASE_URL"])
        if self.SQLALCHEMY_DATABASE_URI.startswith("sqlite"):
            # SQLite enforces foreign keys and waits for the writer instead of failing at once.
            self.SQLALCHEMY_ENGINE_OPTIONS = {"connect_args": {"timeout": 30}}

    def as_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if k.isupper()}


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
