"""The demo's declarative data: its agents, and the word pools and sentence templates its memories
are drawn from. Nothing here touches the database; `plan.py` draws from it and `seed.py` writes.

A template's `categories` are preferences only: a memory gets one of them when the real allowlist of
its agent's role (`console/allowlists.yaml`, docs/reference/api.md, "Allowlists") has it, and otherwise a
category drawn from that allowlist, or none.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Callable
from dataclasses import dataclass

IMPORT_ACTOR = "system:demo"
ADMIN_ACTOR = "admin:demo"

# name, role (one per role the shipped allowlists name), whether the agent ends up over its core token budget
DEMO_AGENTS = (
    ("ada", "supervisor", False),
    ("basil", "planner", True),
    ("cleo", "stylist", True),
    ("dorian", "researcher", False),
    ("esme", "executor", True),
)
DEDUPED_AGENTS = ("ada", "cleo", "esme")  # dorian keeps its exact duplicates for dedup to find
SESSION_AGENT = "basil"  # its session dedups it first, as every session does
ROLLBACK_AGENT = "cleo"
PRECONSENT_AGENT = "ada"
HISTORY_DAYS = 270

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
        ("procedural", "tasks"),
    ),
    Template(
        "Steps to onboard someone to {project}: 1) grant {tool} access, 2) pair with {user}, "
        "3) review {doc}.",
        ("procedure",),
        ("procedural", "tasks"),
    ),
)
INSIGHT_CATEGORY = "relationship_dynamic"  # an insight's category, where the role's allowlist has it
INSIGHTS = (
    Template("{user} shows more trust when I admit mistakes quickly.", ("insight", "trust")),
    Template("{user} engages more when updates lead with the decision, not the background.", ("insight",)),
)
