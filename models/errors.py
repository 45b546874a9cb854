"""Domain errors: each carries a stable code and a message that never contains memory content."""

from __future__ import annotations


class DomainError(Exception):
    """A refused change. `code` is machine-readable; `str(err)` is safe to show a human or a model."""

    code = "refused"
    http_status = 409

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict:
        return {"error": self.code, "message": self.message, **self.details}


class NotFound(DomainError):
    code = "not_found"
    http_status = 404


class ValidationFailed(DomainError):
    code = "invalid"
    http_status = 422


class FeatureDisabled(DomainError):
    """An optional capability switched off by configuration (the message names the setting)."""

    code = "feature_disabled"
    http_status = 404


class ConstitutionalLocked(DomainError):
    code = "constitutional"
    http_status = 409


class ImmutableMemory(DomainError):
    code = "immutable"
    http_status = 409


class RollbackConflict(DomainError):
    code = "rollback_conflict"
    http_status = 409
