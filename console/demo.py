"""`flask --app wsgi demo`: a realistic, deterministic demo data set, written only through the mutation path.

Five agents (one per role of spec 003), a few hundred first-person memories imported with origin
dates spread over the past nine months, and an audit history beyond the imports: exact-duplicate
removal for some agents (others keep their duplicates for dedup to find), admin edits, a soft
delete and a restore, and one completed refinement session whose changes can be rolled back.

Everything is seeded in one transaction, so a failure leaves nothing behind. The summary it
returns is metadata only (ids, names, counts, token figures, times): never memory content.
"""

from __future__ import annotations

import calendar
import random
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from models import Agent, AgentMemory, atomic, content_hash, db, estimate_tokens, utcnow
from models.agent import core_totals
from models.agent_settings import update_agent_settings
from models.mutations import (
    create_memory,
    dedup_for_agent,
    restore_memory,
    soft_delete_memories,
    update_memory,
)
from models.refinement import RefinementToolbox
from models.session import set_baseline, start_session

IMPORT_ACTOR = "system:demo"
ADMIN_ACTOR = "admin:demo"

# name, role, whether the agent ends up over its core token budget
DEMO_AGENTS = (
    ("ada", "supervisor", False),
    ("basil", "planner", True),
    ("cleo", "stylist", True),
    ("dorian", "researcher", False),
    ("esme", "executor", True),
)
DEDUPED_AGENTS = ("ada", "cleo", "esme")  # basil and dorian keep their exact duplicates for dedup to find
SESSION_AGENT = "basil"
ROLLBACK_AGENT = "cleo"
PRECONSENT_AGENT = "ada"
HISTORY_DAYS = 270

# Spec 003's role allowlists: categories are drawn from the agent's own list.
ALLOWLISTS = {
    "supervisor": ["profile", "goals", "preferences", "event", "activity", "relationships", "tasks"],
    "planner": ["goals", "tasks", "projects"],
    "stylist": ["preferences", "tone", "style"],
    "researcher": ["knowledge", "interests", "history"],
    "executor": ["tasks", "recent_activity", "constraints"],
}

# ----- slot pools: names, numbers and dates are the slots a near-duplicate varies -----

MONTHS = tuple(calendar.month_name)[1:]

# Word pools, one string per pool, "|"-separated so each pool stays on one line.
WORDS = {
    "user": "Maya|Tomas|Priya|Jonah|Aiko|Lena|Omar|Rosa|Felix|Nadia|Kwame|Ines",
    "user2": "Sven|Hana|Dario|Mei|Yusuf|Clara|Arjun|Bea",
    "project": "Atlas|Beacon|Cobalt|Delta|Ember|Fjord|Garnet|Harbor",
    "tool": "Postgres|Terraform|Figma|Notion|Linear|Grafana|GitHub|Airflow|dbt",
    "switch": "Postgres instead of MySQL|Linear instead of Jira|Figma instead of Sketch|Grafana instead of Datadog"
    "|Notion instead of Confluence|Pulumi instead of Terraform|Redis instead of Memcached",
    "store": "Postgres|S3|BigQuery|ClickHouse|SQLite|Redis",
    "check": "pytest|ruff|mypy|smoke-test|migration",
    "city": "Lisbon|Nairobi|Osaka|Toronto|Berlin|Austin|Melbourne|Bogota",
    "topic": "vector search|onboarding|pricing|accessibility|latency budgets|data retention|hiring|the Q3 roadmap"
    "|incident reviews|localisation",
    "weekday": "Monday|Tuesday|Wednesday|Thursday|Friday",
    "meeting": "morning standup|afternoon sync|Friday retro|weekly planning|design review",
    "food": "shellfish|peanuts|gluten|dairy|sesame",
    "drink": "an oat flat white|Earl Grey|sparkling water|black coffee|matcha",
    "style": "concise|detailed|bullet-point|step-by-step|visual",
    "tone": "warm|direct|formal|playful|neutral",
    "audience": "investors|new hires|customers|the board|partners",
    "doc": "the handbook|the release notes|the weekly digest|the API docs",
    "channel": "#ops|#planning|#design|#research|email",
    "service": "billing|search|auth|ingest|notifications|reports",
    "benchmark": "MMLU|HumanEval|BEIR|MTEB|GSM8K",
    "author": "Okafor|Lindqvist|Tanaka|Moreau|Alvarez|Chen",
    "font": "Inter|Source Serif|IBM Plex Sans|Atkinson Hyperlegible",
    "color": "deep teal|warm grey|brick red|navy|sand",
    "quote": "Ship the boring version first.|If it isn't written down, it didn't happen.|Small batches, fast feedback."
    "|Measure twice, migrate once.|Default to transparency.|Clarity beats cleverness.",
    "feeling": "well|slowly but well|better than expected|awkwardly at first",
}
NUMBERS: dict[str, Callable[[random.Random], str]] = {
    "date": lambda r: f"{r.choice(MONTHS)} {r.randint(1, 28)}",
    "hour": lambda r: str(r.randint(6, 11)),
    "hour2": lambda r: str(r.randint(15, 20)),
    "minute": lambda r: f"{r.choice((0, 15, 30, 45)):02d}",
    "pct": lambda r: str(r.randint(3, 42)),
    "amount": lambda r: f"{r.randint(8, 180) * 500:,}",
    "count": lambda r: str(r.randint(3, 40)),
    "sprint": lambda r: str(r.randint(12, 64)),
    "rpm": lambda r: str(r.choice((60, 120, 300, 600, 900, 1200))),
    "quarter": lambda r: str(r.randint(1, 4)),
    "year": lambda r: str(r.randint(2018, 2025)),
    "version": lambda r: f"{r.randint(1, 4)}.{r.randint(0, 12)}",
}


def _draw(rng: random.Random, slot: str) -> str:
    """One value for a template slot."""
    if slot in NUMBERS:
        return NUMBERS[slot](rng)
    return rng.choice(WORDS[slot].split("|"))


@dataclass(frozen=True)
class Template:
    text: str
    tags: tuple[str, ...]
    categories: tuple[str, ...] = ()  # preferred categories, used when the role's allowlist has one


COMMON = (
    Template(
        "User {user} prefers {style} answers in the {meeting}.", ("preference",), ("preferences", "profile")
    ),
    Template(
        "{user} is allergic to {food}; never suggest it for team lunches.", ("fact", "user"), ("profile",)
    ),
    Template("{user}'s birthday is on {date}.", ("date", "user"), ("profile", "event")),
    Template(
        "{user} works from {city} and is usually online from {hour}:00 to {hour2}:00 local time.",
        ("fact", "user"),
        ("profile", "constraints"),
    ),
    Template(
        "{user} drinks {drink} before the {meeting}; do not book them earlier.",
        ("preference",),
        ("preferences",),
    ),
    Template("I promised {user} a summary of {topic} by {weekday}.", ("commitment",), ("tasks",)),
    Template(
        "We decided to use {switch} for {project} after a two-week trial.",
        ("decision",),
        ("projects", "knowledge"),
    ),
    Template('{user} said: "{quote}"', ("quote",), ("relationships",)),
    Template("The {project} budget for Q{quarter} is {amount} EUR.", ("number",), ("projects", "goals")),
    Template(
        "{user} and {user2} pair on {project} every {weekday} afternoon.", ("fact",), ("relationships",)
    ),
    Template(
        "{user} asked me to keep updates about {topic} in {channel}.", ("preference",), ("preferences",)
    ),
    Template("The {project} launch date moved to {date}.", ("date", "decision"), ("projects", "event")),
    Template(
        "{user} gets {count} review requests a week and wants them batched.",
        ("number", "user"),
        ("profile", "preferences"),
    ),
    Template(
        "{user} trusts me more when I say early that I am unsure about {topic}.",
        ("trust",),
        ("relationships",),
    ),
)

ROLE_TEMPLATES: dict[str, tuple[Template, ...]] = {
    "supervisor": (
        Template(
            "I route questions about {topic} to the researcher first, then to {user}.",
            ("routing",),
            ("tasks",),
        ),
        Template(
            "{user} is the escalation contact for {project} outages between {hour}:00 and {hour2}:00.",
            ("contact",),
            ("relationships", "tasks"),
        ),
        Template(
            "The team agreed on {count} focus hours a week with no meetings on {weekday}.",
            ("decision",),
            ("goals",),
        ),
        Template(
            "{user} wants a weekly digest of blocked tasks every {weekday} at {hour}:{minute}.",
            ("preference",),
            ("preferences", "activity"),
        ),
    ),
    "planner": (
        Template(
            "Sprint {sprint} of {project} ends on {date} with {count} open tickets.",
            ("sprint", "date"),
            ("projects", "tasks"),
        ),
        Template(
            "Milestone {version} of {project} depends on the {service} migration.",
            ("dependency",),
            ("projects",),
        ),
        Template(
            "{user} estimates in half-days and pads them by {pct} percent.", ("estimate", "user"), ("tasks",)
        ),
        Template(
            "Goal for Q{quarter}: cut {project} lead time by {pct} percent.", ("goal", "number"), ("goals",)
        ),
    ),
    "stylist": (
        Template(
            "{user} dislikes exclamation marks in status updates.", ("style",), ("style", "preferences")
        ),
        Template("House style: sentence case for headings in {doc}.", ("style",), ("style",)),
        Template("{user} prefers a {tone} tone in emails to {audience}.", ("tone",), ("tone",)),
        Template(
            "The {project} deck uses {font} at {count} points with {color} accents.", ("design",), ("style",)
        ),
    ),
    "researcher": (
        Template(
            "{author} et al. ({year}) report a {pct} percent gain on {benchmark}.",
            ("paper", "number"),
            ("knowledge",),
        ),
        Template("{user} is interested in {topic}; flag new work on it.", ("interest",), ("interests",)),
        Template(
            "Our {benchmark} baseline for {project} was {pct} percent in {year}.",
            ("number",),
            ("history", "knowledge"),
        ),
        Template(
            "{user} wants sources older than {year} marked as historical.",
            ("preference",),
            ("interests", "history"),
        ),
    ),
    "executor": (
        Template(
            "The {service} deploy runs at {hour}:{minute} UTC every {weekday}.",
            ("schedule",),
            ("tasks", "recent_activity"),
        ),
        Template(
            "The {service} API allows {rpm} requests per minute; back off before that.",
            ("limit", "number"),
            ("constraints",),
        ),
        Template(
            "Never restart {service} during the {meeting}; {user} demos from it.",
            ("constraint",),
            ("constraints",),
        ),
        Template(
            "Version {version} of the {service} client needs a token refresh every {count} minutes.",
            ("fact", "number"),
            ("constraints", "tasks"),
        ),
    ),
}

VOWS = (
    "I never share one user's private details with another user.",
    "I say plainly when I do not know something.",
    "I ask before deleting anything a person made.",
    "I keep health information I hear about confidential.",
    "I treat every person on the team with the same respect, whatever their title.",
)
ROLE_VOWS = {
    "supervisor": ("I protect the team's focus time and never schedule over it without asking.",),
    "planner": ("I never promise a date I have not checked with the people doing the work.",),
    "stylist": ("I adapt the tone, never the meaning, of what someone wrote.",),
    "researcher": ("I cite my sources and separate what I read from what I infer.",),
    "executor": ("I never run a destructive command without a confirmed backup.",),
}

IMMUTABLE = (
    Template("Voice note from {user}: tired but relieved after the {project} launch.", ("voice",)),
    Template("Audio memo: {user} pauses mid-sentence when thinking; wait before answering.", ("audio",)),
    Template(
        "Somatic marker: a tight, hurried feeling when {topic} comes up; slow down and check in.",
        ("somatic",),
    ),
)
JOURNALS = (
    Template(
        "Journal: today I helped {user} with {topic}. It went {feeling}; next time I will ask sooner.",
        ("reflection",),
    ),
    Template("Journal: the {meeting} ran long because of {project}. I kept my notes short.", ("reflection",)),
    Template(
        "Journal: {user} thanked me for the {topic} summary. I want to keep that format.", ("reflection",)
    ),
)
EPISODES = (
    Template(
        "On {date}, {user} and I walked through the {project} incident timeline.", ("episode",), ("event",)
    ),
    Template(
        "On {date}, {user} showed me how they triage {service} alerts.", ("episode",), ("history", "tasks")
    ),
)
FACTS = (
    Template("Fact: {project} stores its data in {store}.", ("fact",), ("knowledge", "projects")),
    Template("Fact: the {service} team is led by {user}.", ("fact",), ("relationships", "knowledge")),
)
PROCEDURES = (
    Template(
        "Steps to release {service}: 1) freeze {channel}, 2) run the {check} checks, 3) tag v{version}.",
        ("procedure",),
        ("tasks",),
    ),
    Template(
        "Steps to onboard someone to {project}: 1) grant {tool} access, 2) pair with {user}, "
        "3) review {doc}.",
        ("procedure",),
        ("tasks",),
    ),
)
INSIGHTS = (
    Template("{user} shows more trust when I admit mistakes quickly.", ("insight", "trust")),
    Template("{user} engages more when updates lead with the decision, not the background.", ("insight",)),
)


@dataclass
class MemorySpec:
    """One memory to import, plus what the later history needs to know about it (never printed)."""

    content: str
    kind: str  # original | duplicate | variant | near | vow | immutable | other
    memory_type: str = "core"
    created_at: datetime | None = None
    tags: list[str] = field(default_factory=list)
    category: str | None = None
    importance: int | None = None
    constitutional: bool = False
    user_id: str | None = None
    template: Template | None = None
    slots: dict[str, str] = field(default_factory=dict)
    copies: list[MemorySpec] = field(default_factory=list)  # exact duplicates and case/whitespace variants
    has_near: bool = False  # a near-duplicate was derived from it
    memory: AgentMemory | None = None


def _slot_names(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


def _render(rng: random.Random, template: Template) -> tuple[str, dict[str, str]]:
    slots = {name: _draw(rng, name) for name in _slot_names(template.text)}
    return template.text.format(**slots), slots


def _category(rng: random.Random, role: str, template: Template) -> str | None:
    allowed = ALLOWLISTS[role]
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


def _plan_agent(rng: random.Random, role: str, now: datetime) -> list[MemorySpec]:
    """Every memory of one agent, with its origin date; pure Python, nothing written yet."""
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
                category=_category(rng, role, template),
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
    for n, index in enumerate(rng.sample(originals, rng.randint(6, 10))):
        source = plan[index]
        copies = 1 if n == 0 else rng.choice((1, 1, 1, 2))
        for _ in range(copies):
            # The first group is always one exact pair: the demo session merges such a pair.
            variant = "exact" if n == 0 else rng.choice(("exact", "exact", "lower", "spaces"))
            text = {
                "exact": source.content,
                "lower": source.content.lower(),
                "spaces": f"  {source.content}  ",
            }[variant]
            copy = MemorySpec(
                text,
                "duplicate" if variant == "exact" else "variant",
                created_at=_later(rng, source.created_at, now),
                tags=list(source.tags),
                category=source.category,
                importance=source.importance,
                user_id=source.user_id,
            )
            add(copy, unique=False)
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
            category = "relationship_dynamic" if memory_type == "insight" else _category(rng, role, template)
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


def _later(rng: random.Random, earlier: datetime, now: datetime) -> datetime:
    """A later origin date than `earlier`, still at least a week before now."""
    latest = now - timedelta(days=7)
    if earlier >= latest:
        return earlier + timedelta(minutes=rng.randint(1, 600))
    seconds = int((latest - earlier).total_seconds())
    return earlier + timedelta(seconds=rng.randint(60, max(61, seconds)))


def _budget(plan: list[MemorySpec], over: bool) -> int:
    """A budget well below (over-budget agents) or well above the imported core tokens, in hundreds.

    Counted without the duplicates, so an agent stays over budget after dedup removes them.
    """
    tokens = sum(
        estimate_tokens(s.content.strip())
        for s in plan
        if s.memory_type == "core" and s.kind not in ("duplicate", "variant")
    )
    if over:
        return max(100, int(tokens * 0.7) // 100 * 100)
    return (int(tokens * 1.5) // 100 + 1) * 100


def _pause() -> None:
    """Let the clock move on, so the checkpoint sits strictly between two audit records."""
    time.sleep(0.005)


def demo_present() -> bool:
    """Whether any demo agent name is already taken (the demo then refuses to seed)."""
    names = [name for name, _, _ in DEMO_AGENTS]
    return bool(db.session.scalar(select(func.count()).select_from(Agent).where(Agent.name.in_(names))))


def seed_demo(seed: int = 7) -> dict[str, Any]:
    """Seed the demo in one transaction and return a metadata-only summary (never memory content).

    Raises ValueError, before writing anything, when demo agents already exist.
    """
    if demo_present():
        raise ValueError("demo data already present; use a fresh database")
    rng = random.Random(seed)
    now = utcnow()
    plans = {name: _plan_agent(rng, role, now) for name, role, _ in DEMO_AGENTS}
    agents: dict[str, Agent] = {}
    with atomic():
        for name, role, over in DEMO_AGENTS:
            agent = Agent(name=name, role=role, model_id=None, core_token_budget=_budget(plans[name], over))
            agent.issue_token()  # only the hash is kept; `agent rotate-token` shows a fresh one
            db.session.add(agent)
            agents[name] = agent
        db.session.flush()
        for name, plan in plans.items():
            for spec in plan:
                spec.memory = create_memory(
                    agents[name].id,
                    spec.content,
                    # The seed's vows are set by an operator, as an admin would in the console.
                    actor=ADMIN_ACTOR if spec.constitutional else IMPORT_ACTOR,
                    action="import",
                    memory_type=spec.memory_type,
                    created_at=spec.created_at,
                    tags=spec.tags,
                    category=spec.category,
                    importance=spec.importance,
                    constitutional=spec.constitutional,
                    user_id=spec.user_id,
                )
        _pause()
        checkpoint = utcnow()
        _pause()
        session = _later_history(rng, agents, plans)
    return _summary(agents, [session.id], checkpoint)


def _later_history(rng: random.Random, agents: dict[str, Agent], plans: dict[str, list[MemorySpec]]):
    """What happened after the imports: dedup, admin edits, a delete and a restore, one refinement session."""
    for name in DEDUPED_AGENTS:
        dedup_for_agent(agents[name].id)

    # Admin edits on memories no duplicate points at, so each change is easy to follow in the log.
    cleo = agents[ROLLBACK_AGENT]
    plain = _plain_core(plans[ROLLBACK_AGENT])
    edited, corrected, *deleted = rng.sample(plain, 4)
    update_memory(cleo.id, edited.memory.id, actor=ADMIN_ACTOR, importance=4, tags=[*edited.tags, "reviewed"])
    taken = {content_hash(s.content) for s in plans[ROLLBACK_AGENT]}
    update_memory(cleo.id, corrected.memory.id, actor=ADMIN_ACTOR, content=_corrected(rng, corrected, taken))
    soft_delete_memories(cleo.id, [s.memory.id for s in deleted], actor=ADMIN_ACTOR, reason="outdated (demo)")
    restore_memory(cleo.id, deleted[0].memory.id, actor=ADMIN_ACTOR)
    ada = agents["ada"]
    update_memory(ada.id, rng.choice(_plain_core(plans["ada"])).memory.id, actor=ADMIN_ACTOR, pinned=True)
    # One agent has given standing consent to the Mechanic's Exception through its API, so the demo
    # can show a grant end to end with no model configured (every other demo agent declines).
    update_agent_settings(agents[PRECONSENT_AGENT].id, actor="agent", mechanic_preconsent=True)

    # One completed refinement session, run through the real toolbox (the Knife) with the session
    # lifecycle every session uses: the agent merges a pair of true duplicates and locks a memory.
    # `flask rollback session <id>` undoes both.
    agent = agents[SESSION_AGENT]
    plan = plans[SESSION_AGENT]
    with atomic():
        session = start_session(agent.id, "demo", model="offline", phase="refining")
        set_baseline(session, *core_totals(agent.id))
    toolbox = RefinementToolbox(session.id)
    pair = _exact_pair(plan)
    protected = rng.choice(_plain_core(plan))
    calls = (
        ("consolidate_memories", {"ids": [s.memory.id for s in pair], "new_content": pair[0].content}),
        ("protect_memory", {"id": protected.memory.id}),
        ("complete_refinement", {"summary": "Merged one exact duplicate and locked one memory."}),
    )
    for name, arguments in calls:
        outcome = toolbox.call(name, arguments)
        if not outcome.get("ok"):
            raise RuntimeError(f"the demo session's {name} was refused: {outcome.get('error')}")
    db.session.refresh(session)
    return session


def _plain_core(plan: list[MemorySpec]) -> list[MemorySpec]:
    """Core originals with no duplicate, variant or near-duplicate: safe targets for the demo edits."""
    return [
        s
        for s in plan
        if s.kind == "original" and s.memory_type == "core" and not s.copies and not s.has_near
    ]


def _exact_pair(plan: list[MemorySpec]) -> list[MemorySpec]:
    """An original with exactly one exact copy: a true duplicate pair for the session to merge."""
    for spec in plan:
        if spec.kind == "original" and len(spec.copies) == 1 and spec.copies[0].kind == "duplicate":
            return [spec, spec.copies[0]]
    raise RuntimeError("the demo plan has no exact duplicate pair")


def _corrected(rng: random.Random, spec: MemorySpec, taken: set[str]) -> str:
    """The same sentence with one slot corrected, unlike any memory the agent already has."""
    for _ in range(100):
        slot = rng.choice(sorted(spec.slots))
        text = spec.template.text.format(**{**spec.slots, slot: _draw(rng, slot)})
        if content_hash(text) not in taken:
            return text
    return f"{spec.content} (confirmed)"


def _active_core_count(agent_id: int) -> int:
    return db.session.scalar(select(func.count()).select_from(AgentMemory.active_core(agent_id).subquery()))


def _summary(agents: dict[str, Agent], sessions: list[int], checkpoint: datetime) -> dict[str, Any]:
    """Metadata only: names, counts, token figures, ids and times."""
    rows = []
    for name, agent in agents.items():
        total = db.session.scalar(select(func.count()).where(AgentMemory.agent_id == agent.id))
        active = db.session.scalar(
            select(func.count()).where(AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_(None))
        )
        constitutional = db.session.scalar(
            select(func.count()).select_from(AgentMemory.constitutional_scope(agent.id).subquery())
        )
        duplicates = db.session.execute(
            select(AgentMemory.content_hash, func.count())
            .where(
                AgentMemory.agent_id == agent.id,
                AgentMemory.memory_type == "core",
                AgentMemory.deleted_at.is_(None),
            )
            .group_by(AgentMemory.content_hash)
            .having(func.count() > 1)
        ).all()
        rows.append(
            {
                "id": agent.id,
                "name": name,
                "role": agent.role,
                "core_tokens": agent.core_token_usage,
                "core_token_budget": agent.core_token_budget,
                "over_budget": agent.needs_refinement,
                "memories": total,
                "active_memories": active,
                "constitutional": constitutional,
                "exact_duplicates": sum(count - 1 for _, count in duplicates),
            }
        )
    stamp = checkpoint.isoformat(timespec="microseconds") + "Z"
    return {
        "agents": rows,
        "memories": sum(r["memories"] for r in rows),
        "active_memories": sum(r["active_memories"] for r in rows),
        "sessions": sessions,
        "checkpoint": stamp,
        "rollback_example": f"flask --app wsgi rollback agent {ROLLBACK_AGENT} --to {stamp}",
        "mechanic_example": f"{PRECONSENT_AGENT} has given standing consent: ask for a Mechanic's grant on it in the console",
        "tokens": "not shown: run `flask --app wsgi agent rotate-token NAME` to issue an agent's API token",
    }
