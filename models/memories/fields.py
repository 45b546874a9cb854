"""The rules of every memory field an agent, a job, an import line or a model's tool call can set.

One table, read by every layer that takes such a value: the columns (`models/memories/memory.py` sizes its
`String` columns from it), the mutation path (`models/changes/rules.py` checks each value against it
before anything is written), the agent API's request models, the import file's line model and the
refinement tools (all built from the pydantic types below). A limit changed here changes on every
path at once, so a value too long for its column is a validation error naming the field wherever it
comes from, never a database error at commit (PostgreSQL refuses an over-long `varchar`; SQLite
would store it silently).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from sqlalchemy import String

from models.errors import ValidationFailed
from models.parsing import NO_NUL, to_utc, validation_problems

MEMORY_TYPES = ("core", "journal", "semantic", "episodic", "insight", "procedural")
MEMORY_TYPE_LENGTH = 20  # the column holds any of MEMORY_TYPES with room to add one
IMPORTANCE_MIN, IMPORTANCE_MAX = 1, 5
MAX_TAGS = 32
# A category is a name the allowlist file can list and a URL or a tool argument can carry verbatim.
CATEGORY_PATTERN = r"^[A-Za-z0-9_.:-]+$"


@dataclass(frozen=True)
class TextRule:
    """A text field: 1 to `max_length` characters matching `pattern` (by default: no NUL, which
    neither database stores)."""

    max_length: int
    pattern: str = NO_NUL

    @property
    def type(self) -> Any:
        """The pydantic type of a value under this rule (the API, the import and the tools use it)."""
        return Annotated[str, Field(min_length=1, max_length=self.max_length, pattern=self.pattern)]

    def column(self) -> String:
        return String(self.max_length)


CONTENT = TextRule(10_000)
CATEGORY = TextRule(64, CATEGORY_PATTERN)
SCOPE_ID = TextRule(128)  # user_id, thread_id, run_id, actor_id: the caller's own identifiers
ROLE = TextRule(32)
TAG = TextRule(64)

SCOPING_FIELDS = ("user_id", "thread_id", "run_id", "actor_id", "role")
# Every text field with a length limit, by column name: the columns are sized from this table.
TEXT_RULES: dict[str, TextRule] = {
    "content": CONTENT,
    "category": CATEGORY,
    "user_id": SCOPE_ID,
    "thread_id": SCOPE_ID,
    "run_id": SCOPE_ID,
    "actor_id": SCOPE_ID,
    "role": ROLE,
}
MAX_CONTENT_CHARS = CONTENT.max_length
MAX_TAG_CHARS = TAG.max_length

# The pydantic types, one per rule.
if TYPE_CHECKING:  # to a type checker each is a str; pydantic sees the constrained type
    Content = str
    CategoryName = str
    Ident = str
    Role = str
    Tag = str
else:
    Content = CONTENT.type
    CategoryName = CATEGORY.type
    Ident = SCOPE_ID.type
    Role = ROLE.type
    Tag = TAG.type
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
Importance = Annotated[int, Field(ge=IMPORTANCE_MIN, le=IMPORTANCE_MAX)]
MemoryType = Literal[MEMORY_TYPES]  # type: ignore[valid-type]
# A time with any offset (none means UTC), as the naive UTC every column stores; clamped to years
# 1-9999, so 0001-01-01T00:00+14:00 is the first moment, not an error (models/parsing.py).
UtcTime = Annotated[datetime, AfterValidator(to_utc)]

# What the mutation path checks for the fields it does not normalise itself (content is stripped and
# tags de-duplicated first, in models/changes/rules.py, against the same limits). None clears a field.
_STRICT = ConfigDict(strict=True)


def _strict(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation, config=_STRICT)


_CHECKS: dict[str, TypeAdapter[Any]] = {
    "memory_type": _strict(MemoryType),
    "category": _strict(CategoryName | None),
    "importance": _strict(Importance | None),
    "pinned": _strict(bool),
    **{name: _strict(TEXT_RULES[name].type | None) for name in SCOPING_FIELDS},
}


def check_field(name: str, value: Any) -> Any:
    """`value` if it keeps `name`'s rule, else ValidationFailed naming the field and the rule broken
    (never quoting the value). Fields without a rule here pass unchanged."""
    check = _CHECKS.get(name)
    if check is None:
        return value
    try:
        return check.validate_python(value)
    except ValidationError as err:
        problem = validation_problems(err, name)[0]
        raise ValidationFailed(f"{name}: {problem['message']}", field=name, rule=problem["rule"]) from None
