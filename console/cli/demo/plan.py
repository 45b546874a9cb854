"""The demo's plan: every memory of one agent, drawn from `data.py` with a seeded random generator.

Pure Python: nothing is written here. The same seed gives the same plan (and the same demo).
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from models import AgentMemory, content_hash, estimate_tokens

from .data import (
    COMMON,
    EPISODES,
    FACTS,
    HISTORY_DAYS,
    IMMUTABLE,
    INSIGHT_CATEGORY,
    INSIGHTS,
    JOURNALS,
    NUMBERS,
    PROCEDURES,
    ROLE_TEMPLATES,
    ROLE_VOWS,
    VOWS,
    WORDS,
    Template,
)


def _draw(rng: random.Random, slot: str) -> str:
    """One value for a template slot."""
    if slot in NUMBERS:
        return NUMBERS[slot](rng)
    return rng.choice(WORDS[slot].split("|"))


COPIES = ("duplicate", "variant", "restated")  # the kinds that repeat an original


@dataclass
class MemorySpec:
    """One memory to import, plus what the later history needs to know about it (never printed)."""

    content: str
    kind: str  # original | duplicate | variant | restated | near | vow | immutable | other
    memory_type: str = "core"
    created_at: datetime | None = None
    tags: list[str] = field(default_factory=list)
    category: str | None = None
    importance: int | None = None
    constitutional: bool = False
    user_id: str | None = None
    template: Template | None = None
    slots: dict[str, str] = field(default_factory=dict)
    copies: list[MemorySpec] = field(default_factory=list)  # its duplicates, variants and restatements
    has_near: bool = False  # a near-duplicate was derived from it
    memory: AgentMemory | None = None


def _slot_names(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


def _render(rng: random.Random, template: Template) -> tuple[str, dict[str, str]]:
    slots = {name: _draw(rng, name) for name in _slot_names(template.text)}
    return template.text.format(**slots), slots


def _category(rng: random.Random, allowed: Sequence[str], template: Template) -> str | None:
    """One of the template's preferred categories that the role allows, else (half the time) any it allows."""
    if not allowed:
        return None
    preferred = [c for c in template.categories if c in allowed]
    if preferred:
        return rng.choice(preferred)
    return rng.choice(allowed) if rng.random() < 0.5 else None


def _user_id(slots: dict[str, str]) -> str | None:
    return f"user:{slots['user'].lower()}" if "user" in slots else None


def _past(rng: random.Random, now: datetime, min_days: float, max_days: float) -> datetime:
    """An origin date between min_days and max_days ago, to the second."""
    seconds = rng.randint(int(min_days * 86400), int(max_days * 86400))
    return (now - timedelta(seconds=seconds)).replace(microsecond=0)


def plan_agent(rng: random.Random, role: str, now: datetime, allowed: Sequence[str]) -> list[MemorySpec]:
    """Every memory of one agent, with its origin date; pure Python, nothing written yet.

    `allowed` is the real allowlist of the agent's role: every category a memory gets is one of it."""
    hashes: set[str] = set()
    plan: list[MemorySpec] = []

    def add(spec: MemorySpec, *, unique: bool = True) -> bool:
        digest = content_hash(spec.content)
        if unique and digest in hashes:
            return False
        hashes.add(digest)
        plan.append(spec)
        return True

    templates = COMMON + ROLE_TEMPLATES[role]
    target = rng.randint(55, 85)
    while sum(s.kind == "original" for s in plan) < target:
        template = rng.choice(templates)
        text, slots = _render(rng, template)
        add(
            MemorySpec(
                text,
                "original",
                created_at=_past(rng, now, 8, HISTORY_DAYS),
                tags=list(template.tags),
                category=_category(rng, allowed, template),
                importance=rng.choice((None, None, 2, 3, 4)),
                user_id=_user_id(slots),
                template=template,
                slots=slots,
            )
        )
    originals = [i for i, s in enumerate(plan) if s.kind == "original"]

    # Vows: constitutional, high importance, among the oldest memories.
    vows = rng.sample(VOWS, rng.randint(2, 4)) + list(ROLE_VOWS[role])
    for vow in vows:
        add(
            MemorySpec(
                vow,
                "vow",
                created_at=_past(rng, now, 200, HISTORY_DAYS),
                tags=["vow", "values"],
                importance=5,
                constitutional=True,
            )
        )

    # Memories tagged voice/audio/somatic: immutable for every agent path.
    for template in rng.sample(IMMUTABLE, rng.randint(2, 3)):
        text, slots = _render(rng, template)
        add(
            MemorySpec(
                text,
                "immutable",
                created_at=_past(rng, now, 8, HISTORY_DAYS),
                tags=list(template.tags),
                importance=3,
                user_id=_user_id(slots),
            )
        )

    # Exact duplicates and case/whitespace variants of originals: the same content_hash, a later origin date.
    for index in rng.sample(originals, rng.randint(6, 10)):
        source = plan[index]
        for _ in range(rng.choice((1, 1, 1, 2))):
            variant = rng.choice(("exact", "exact", "lower", "spaces"))
            text = {
                "exact": source.content,
                "lower": source.content.lower(),
                "spaces": f"  {source.content}  ",
            }[variant]
            copy = _copy(rng, source, text, "duplicate" if variant == "exact" else "variant", now)
            add(copy, unique=False)
            source.copies.append(copy)

    # Restatements: an original again with only its final punctuation changed, as a second import that
    # lost the full stop. Another content_hash, so dedup keeps them; the same fact in the same words, so
    # a refinement session merges them (the offline refiner's same-fact rule, jobs/offline.py).
    for index in rng.sample([i for i in originals if not plan[i].copies], rng.randint(2, 4)):
        source = plan[index]
        text = source.content[:-1] if source.content.endswith(".") else f"{source.content}."
        copy = _copy(rng, source, text, "restated", now)
        if add(copy):
            source.copies.append(copy)

    # Near-duplicates: the same sentence with one name, number or date changed. Dedup must leave them alone.
    near_sources = [i for i in originals if plan[i].slots]
    for index in rng.sample(near_sources, rng.randint(5, 8)):
        source = plan[index]
        for _ in range(20):
            slot = rng.choice(sorted(source.slots))
            slots = {**source.slots, slot: _draw(rng, slot)}
            text = source.template.text.format(**slots)
            if add(
                MemorySpec(
                    text,
                    "near",
                    created_at=_later(rng, source.created_at, now),
                    tags=list(source.tags),
                    category=source.category,
                    importance=source.importance,
                    user_id=_user_id(slots),
                )
            ):
                source.has_near = True
                break

    # Journals (a third of them from the last week, so they reach the prompt), episodes, facts, procedures, insights.
    for n in range(rng.randint(6, 12)):
        template = rng.choice(JOURNALS)
        text, slots = _render(rng, template)
        when = _past(rng, now, 0.05, 6.5) if n % 3 == 0 else _past(rng, now, 8, HISTORY_DAYS)
        add(MemorySpec(text, "other", "journal", when, list(template.tags), user_id=_user_id(slots)))
    for memory_type, pool, count in (
        ("episodic", EPISODES, rng.randint(4, 8)),
        ("semantic", FACTS, rng.randint(4, 8)),
        (
            "procedural",
            PROCEDURES,
            rng.randint(3, 5) if role in ("planner", "executor") else rng.randint(0, 1),
        ),
        ("insight", INSIGHTS, rng.randint(1, 3)),
    ):
        for _ in range(count):
            template = rng.choice(pool)
            text, slots = _render(rng, template)
            if memory_type == "insight" and INSIGHT_CATEGORY in allowed:
                category = INSIGHT_CATEGORY
            else:
                category = _category(rng, allowed, template)
            add(
                MemorySpec(
                    text,
                    "other",
                    memory_type,
                    _past(rng, now, 8, HISTORY_DAYS),
                    list(template.tags),
                    category=category,
                    importance=2 if memory_type == "insight" else rng.randint(1, 5),
                    user_id=_user_id(slots),
                )
            )
    # Imported in origin-date order, as an export from the agent's previous store would be.
    plan.sort(key=lambda s: s.created_at)
    return plan


def _copy(rng: random.Random, source: MemorySpec, text: str, kind: str, now: datetime) -> MemorySpec:
    """A copy of an original under another wording, imported later with the original's metadata."""
    return MemorySpec(
        text,
        kind,
        created_at=_later(rng, source.created_at, now),
        tags=list(source.tags),
        category=source.category,
        importance=source.importance,
        user_id=source.user_id,
    )


def _later(rng: random.Random, earlier: datetime, now: datetime) -> datetime:
    """A later origin date than `earlier`, still at least a week before now."""
    latest = now - timedelta(days=7)
    if earlier >= latest:
        return earlier + timedelta(minutes=rng.randint(1, 600))
    seconds = int((latest - earlier).total_seconds())
    return earlier + timedelta(seconds=rng.randint(60, max(61, seconds)))


def budget(plan: list[MemorySpec], over: bool) -> int:
    """A budget well below (over-budget agents) or well above the imported core tokens, in hundreds.

    Counted without the copies, so an agent stays over budget after dedup and a session remove them.
    """
    tokens = sum(
        estimate_tokens(s.content.strip()) for s in plan if s.memory_type == "core" and s.kind not in COPIES
    )
    if over:
        return max(100, int(tokens * 0.7) // 100 * 100)
    return (int(tokens * 1.5) // 100 + 1) * 100


def plain_core(plan: list[MemorySpec]) -> list[MemorySpec]:
    """Core originals with no duplicate, variant or near-duplicate: safe targets for the demo edits."""
    return [
        s
        for s in plan
        if s.kind == "original" and s.memory_type == "core" and not s.copies and not s.has_near
    ]


def corrected_text(rng: random.Random, spec: MemorySpec, taken: set[str]) -> str:
    """The same sentence with one slot corrected, unlike any memory the agent already has."""
    for _ in range(100):
        slot = rng.choice(sorted(spec.slots))
        text = spec.template.text.format(**{**spec.slots, slot: _draw(rng, slot)})
        if content_hash(text) not in taken:
            return text
    return f"{spec.content} (confirmed)"
