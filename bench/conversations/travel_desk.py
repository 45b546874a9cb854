"""A conversational memory set: what a small travel agency's assistant remembers of its clients.

Each agent is one agency branch with its own memory store and its own clients. Over about six months the
assistant notes, in short third-person sentences, who travels with whom (partners, children, parents, friends,
colleagues), profile facts and preferences (seat, diet, mobility, loyalty scheme, passport, budget, hotel taste,
fears, hobbies), trips with their flights, hotels, tours, car hire and payments, plans that change (a flight
moved, a hotel swapped, a trip postponed or cancelled: the original note and the change note both stay),
dated life events mentioned in passing, refunds, complaints and booking codes, plus everyday chatter that
answers no question.

The ``user`` field is the client account the note is filed under: a short lower-case id made of the lead
client's first and last name ("priya.shah"). A travel agency keeps one file per client (the person who books
and pays); companions are travellers on that client's file, not clients of their own, so their facts and the
chatter from a call are filed under the client who was on the call. That is how such an assistant would scope
memories in a real deployment: a staff member serving Priya sees Priya's file, including her husband's diet.

Questions come in five kinds (see ``SHARES``): single-hop (one memory, asked with some of its words),
paraphrase (one memory, at most ``PARAPHRASE_MAX_SHARED`` content words in common with it), multi-hop (a
companion's relation note plus a fact about that companion), temporal (when something is or was, what
changed, which came first) and identifier (quotes a booking code found in exactly one memory).

Run ``python -m bench.conversations.travel_desk --seed N`` to print the statistics of a generated set.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from datetime import UTC, datetime, timedelta

from bench.conversations import travel_desk_templates as t
from bench.conversations import travel_desk_vocab as v

NAME = "travel_desk"
SHARES = {"single-hop": 0.2, "paraphrase": 0.2, "multi-hop": 0.2, "temporal": 0.2, "identifier": 0.2}
KINDS = tuple(SHARES)
PARAPHRASE_MAX_SHARED = 2
SINGLE_HOP_MIN_SHARED = 2
UNANSWERED_TARGET = 0.2
MIN_MEMORIES = 200
TIME_WORDS = frozenset(
    "when date dates day before after first changed change moved postponement now start".split()
)
SPAN_START = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
SPAN_DAYS = 182
STOPWORDS = frozenset(
    """a an the and or but of to in on at for from by with as is are was were be been being am do does did
    has have had it its this that these those there here what which who whom whose where when why how any
    some no not all so if then than too very can could should would will shall may might must i you he she
    we they me him her us them my your his our their about into over under up down out off again just only
    also still after before while during per s let get got""".split()
)

_REF_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def content_words(text: str) -> set[str]:
    """The content words of a text: lower-cased, possessives and plural -s dropped, stop words removed."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("'s", " "))
    out = set()
    for word in words:
        if word in STOPWORDS or len(word) < 2:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return out


def _day(moment: datetime) -> str:
    return f"{moment.day} {moment:%B}"


class _Branch:
    """One agency branch: its clients, its memories, and the questions that could be asked of them."""

    def __init__(self, rng: random.Random, codes: set[str]):
        self.rng = rng
        self.codes = codes
        self.memories: list[dict] = []
        self.candidates: dict[str, list[tuple[str, list[int]]]] = {kind: [] for kind in KINDS}
        self.changes: list[tuple[int, int, str]] = []
        self.users: list[str] = []

    # --- building blocks -------------------------------------------------------------------------------
    def note(self, content: str, at: datetime, user: str, chatter: bool = False) -> int:
        self.memories.append({"content": content, "at": at, "user": user, "chatter": chatter})
        return len(self.memories) - 1

    def ask(self, kind: str, templates: list[str], keys: list[int], **slots: str) -> None:
        options = [template.format(**slots) for template in templates]
        if kind in ("single-hop", "paraphrase"):
            memory_words = content_words(self.memories[keys[0]]["content"])
            if kind == "single-hop":
                options = [
                    o for o in options if len(content_words(o) & memory_words) >= SINGLE_HOP_MIN_SHARED
                ]
            else:
                options = [
                    o for o in options if len(content_words(o) & memory_words) <= PARAPHRASE_MAX_SHARED
                ]
        if options:
            self.candidates[kind].append((self.rng.choice(options), keys))

    def moment(self, low_day: float, high_day: float) -> datetime:
        day = self.rng.uniform(low_day, high_day)
        minutes = self.rng.randint(0, 10 * 60)
        return SPAN_START + timedelta(days=int(day), minutes=minutes)

    def code(self, kind: str) -> str:
        rng = self.rng
        while True:
            if kind == "ref":
                code = "".join(
                    rng.choice(_REF_LETTERS) if i in (0, 1, 3, 4) else str(rng.randint(2, 9))
                    for i in range(6)
                )
            elif kind == "ticket":
                code = f"{rng.choice(['176', '220', '081', '057'])}-{rng.randint(10**9, 10**10 - 1)}"
            elif kind == "hotel":
                code = f"HC{rng.randint(100000, 999999)}"
            elif kind == "voucher":
                code = "VCH-" + "".join(rng.choice(_REF_LETTERS) for _ in range(4)) + f"{rng.randint(10, 99)}"
            elif kind == "car":
                code = f"CR-{rng.randint(1000000, 9999999)}"
            elif kind == "invoice":
                code = f"INV-2025-{rng.randint(1000, 9999)}"
            elif kind == "refund":
                code = f"RF-{rng.randint(100000, 999999)}"
            else:
                code = f"CASE-{rng.randint(10000, 99999)}"
            if code not in self.codes:
                self.codes.add(code)
                return code

    # --- facts -----------------------------------------------------------------------------------------
    def profile(self, person: str, user: str, kinds: list[str], after: float) -> list[tuple[str, int]]:
        noted = []
        for kind in kinds:
            spec = t.PROFILE[kind]
            value = self.rng.choice(spec["values"])
            content = self.rng.choice(spec["memory"]).format(n=person, v=value)
            key = self.note(content, self.moment(after, SPAN_DAYS - 5), user)
            self.ask("single-hop", spec["single"], [key], n=person)
            self.ask("paraphrase", spec["para"], [key], n=person)
            noted.append((kind, key))
        return noted

    def client(self, first: str, last: str, companions: list[str]) -> None:
        rng = self.rng
        user = f"{first}.{last}".lower()
        self.users.append(user)
        kinds = list(t.PROFILE)
        rng.shuffle(kinds)
        self.profile(first, user, kinds[: rng.randint(2, 3)], 0)
        relations = list(v.RELATIONS)
        for companion in companions:
            relation = rng.choice(relations)
            relations = [r for r in relations if r != relation]
            if relation in ("husband", "wife", "partner"):
                relations = [r for r in relations if r not in ("husband", "wife", "partner")]
            when = rng.uniform(0, SPAN_DAYS * 0.6)
            content = rng.choice(t.RELATION_MEMORY).format(c=first, rel=relation, p=companion)
            link = self.note(content, self.moment(when, when), user)
            rng.shuffle(kinds)
            for kind, key in self.profile(companion, user, kinds[:2], when + 1):
                subject = rng.choice(t.MULTI_HOP_SUBJECT).format(c=first, rel=relation)
                self.ask("multi-hop", t.PROFILE[kind]["single"], [link, key], n=subject)
        self.trip(first, user)

    def trip(self, n: str, user: str) -> None:
        rng = self.rng
        d = rng.choice(v.DESTINATIONS)
        booked = rng.uniform(0, 120)
        start = SPAN_START + timedelta(days=int(booked) + rng.randint(21, 90))
        end = start + timedelta(days=rng.randint(3, 13))
        change = rng.choice(["flight", "hotel", "postponed", "cancelled", None, None, None])
        trip = self.note(
            rng.choice(t.TRIP_MEMORY).format(n=n, d=d, start=_day(start), end=_day(end)),
            self.moment(booked, booked),
            user,
        )
        if change not in ("postponed", "cancelled"):
            self.ask("temporal", t.TRIP_WHEN, [trip], n=n, d=d)
        airline, prefix = rng.choice(v.AIRLINES)
        ref = self.code("ref")
        fno = f"{prefix}{rng.randint(100, 989)}"
        flight = self.note(
            rng.choice(t.FLIGHT_MEMORY).format(
                n=n, d=d, date=_day(start), airline=airline, fno=fno, code=ref
            ),
            self.moment(booked, booked + 1),
            user,
        )
        self.ask("identifier", t.FLIGHT_ID, [flight], code=ref)
        if change != "cancelled":
            self.ask("single-hop", t.FLIGHT_SINGLE, [flight], n=n, d=d)
            self.ask("paraphrase", t.FLIGHT_PARA, [flight], n=n, d=d)
        if change not in ("flight", "postponed", "cancelled"):
            self.ask("temporal", t.FLIGHT_WHEN, [flight], n=n, d=d)
        hotel_name = rng.choice(v.HOTELS)
        conf = self.code("hotel")
        hotel = self.note(
            rng.choice(t.HOTEL_MEMORY).format(n=n, d=d, hotel=hotel_name, code=conf),
            self.moment(booked + 1, booked + 4),
            user,
        )
        self.ask("identifier", t.HOTEL_ID, [hotel], code=conf)
        if change not in ("hotel", "cancelled"):
            self.ask("single-hop", t.HOTEL_SINGLE, [hotel], n=n, d=d)
            self.ask("paraphrase", t.HOTEL_PARA, [hotel], n=n, d=d)
        self.extra(n, d, user, booked)
        amount = f"{rng.choice(v.AMOUNTS):,}"
        invoice = self.code("invoice")
        payment = self.note(
            rng.choice(t.PAYMENT_MEMORY).format(n=n, d=d, amt=amount, code=invoice),
            self.moment(booked + 1, booked + 12),
            user,
        )
        self.ask("identifier", t.PAYMENT_ID, [payment], code=invoice)
        self.ask("single-hop", t.PAYMENT_SINGLE, [payment], n=n, d=d)
        self.ask("paraphrase", t.PAYMENT_PARA, [payment], n=n, d=d)
        originals = {"flight": flight, "hotel": hotel, "postponed": trip, "cancelled": trip}
        changed_at = self.moment(booked + 6, booked + min(30, (start - SPAN_START).days - booked - 2))
        if change == "flight":
            new = start + timedelta(days=rng.choice([-3, -2, -1, 1, 2, 3]))
            ticket = self.code("ticket")
            text = rng.choice(t.FLIGHT_MOVED).format(
                n=n, d=d, old=_day(start), new=_day(new), airline=airline, code=ticket
            )
            key = self.note(text, changed_at, user)
            self.ask("temporal", t.FLIGHT_MOVED_Q, [flight, key], n=n, d=d)
            self.ask("identifier", t.TICKET_ID, [key], code=ticket)
            what = f"flight to {d} moved from {_day(start)} to {_day(new)}"
        elif change == "hotel":
            new_hotel = rng.choice([h for h in v.HOTELS if h != hotel_name])
            reason = rng.choice(v.SWAP_REASONS)
            text = rng.choice(t.HOTEL_SWAPPED).format(n=n, d=d, old=hotel_name, new=new_hotel, reason=reason)
            key = self.note(text, changed_at, user)
            self.ask("temporal", t.HOTEL_SWAPPED_Q, [hotel, key], n=n, d=d)
            what = f"hotel in {d} swapped from {hotel_name} to {new_hotel}"
        elif change == "postponed":
            new_start = start + timedelta(days=rng.randint(14, 60))
            new_end = new_start + (end - start)
            text = rng.choice(t.POSTPONED).format(n=n, d=d, start=_day(new_start), end=_day(new_end))
            key = self.note(text, changed_at, user)
            self.ask("temporal", t.POSTPONED_Q, [trip, key], n=n, d=d)
            what = f"trip to {d} postponed from {_day(start)} to {_day(new_start)}"
        elif change == "cancelled":
            text = rng.choice(t.CANCELLED).format(n=n, d=d, reason=rng.choice(v.CANCEL_REASONS))
            key = self.note(text, changed_at, user)
            self.ask("temporal", t.CANCELLED_Q, [trip, key], n=n, d=d)
            what = f"trip to {d} cancelled"
            self.refund(n, d, user, changed_at)
        if change:
            self.changes.append((originals[change], key, what))
        days_after = (end - SPAN_START).days
        if change not in ("postponed", "cancelled") and days_after < SPAN_DAYS - 10 and rng.random() < 0.4:
            self.complaint(n, d, user, hotel_name if change != "hotel" else new_hotel, days_after)
        if rng.random() < 0.75:
            self.event(n, user, trip if change not in ("postponed", "cancelled") else None, start, d)

    def extra(self, n: str, d: str, user: str, booked: float) -> None:
        rng = self.rng
        at = self.moment(booked + 2, booked + 18)
        if rng.random() < 0.5:
            code = self.code("voucher")
            key = self.note(
                rng.choice(t.TOUR_MEMORY).format(n=n, d=d, tour=rng.choice(v.TOURS), code=code), at, user
            )
            templates = (t.TOUR_SINGLE, t.TOUR_PARA, t.TOUR_ID)
        else:
            code = self.code("car")
            text = rng.choice(t.CAR_MEMORY).format(
                n=n, d=d, car=rng.choice(v.CAR_TYPES), carco=rng.choice(v.CAR_HIRE), code=code
            )
            key = self.note(text, at, user)
            templates = (t.CAR_SINGLE, t.CAR_PARA, t.CAR_ID)
        self.ask("single-hop", templates[0], [key], n=n, d=d)
        self.ask("paraphrase", templates[1], [key], n=n, d=d)
        self.ask("identifier", templates[2], [key], code=code)

    def refund(self, n: str, d: str, user: str, after: datetime) -> None:
        code = self.code("refund")
        amount = f"{self.rng.choice(v.AMOUNTS[:8]):,}"
        text = self.rng.choice(t.REFUND_MEMORY).format(n=n, d=d, amt=amount, code=code)
        key = self.note(text, after + timedelta(days=self.rng.randint(4, 15), hours=2), user)
        self.ask("identifier", t.REFUND_ID, [key], code=code)

    def complaint(self, n: str, d: str, user: str, hotel: str, days_after: int) -> None:
        code = self.code("case")
        issue = self.rng.choice(v.COMPLAINT_ISSUES)
        text = self.rng.choice(t.COMPLAINT_MEMORY).format(n=n, d=d, issue=issue, hotel=hotel, code=code)
        at = self.moment(days_after + 1, days_after + 6)
        key = self.note(text, at, user)
        self.ask("identifier", t.COMPLAINT_ID, [key], code=code)
        self.ask("single-hop", t.COMPLAINT_SINGLE, [key], n=n, hotel=hotel)
        if self.rng.random() < 0.5:
            self.refund(n, d, user, at)

    def event(self, n: str, user: str, trip: int | None, start: datetime, d: str) -> None:
        rng = self.rng
        phrase, when_q, noun = rng.choice(t.EVENTS)
        noted = self.moment(20, SPAN_DAYS - 2)
        happened = noted - timedelta(days=rng.randint(1, 25))
        slots = {"company": rng.choice(v.COMPANIES), "town": rng.choice(v.TOWNS)}
        ev = phrase.format(date=_day(happened), **slots)
        key = self.note(rng.choice(t.EVENT_MEMORY).format(n=n, ev=ev), noted, user)
        self.ask("temporal", [when_q], [key], n=n, **slots)
        if trip is not None and abs((happened - start).days) > 5:
            self.ask("temporal", t.EVENT_ORDER_Q, [key, trip], n=n, noun=noun, d=d)

    # --- questions -------------------------------------------------------------------------------------
    def select(self, total: int) -> list[tuple[str, str, list[int]]]:
        counts = {kind: int(total * share) for kind, share in SHARES.items()}
        for kind in sorted(KINDS, key=lambda k: -(total * SHARES[k] % 1))[: total - sum(counts.values())]:
            counts[kind] += 1
        cited: set[int] = set()
        chosen = []
        for kind in ("multi-hop", "temporal", "identifier", "paraphrase", "single-hop"):
            pool = list(self.candidates[kind])
            self.rng.shuffle(pool)
            for _ in range(min(counts[kind], len(pool))):
                best = max(range(len(pool)), key=lambda i: sum(k not in cited for k in pool[i][1]))
                text, keys = pool.pop(best)
                cited.update(keys)
                chosen.append((kind, text, keys))
        return chosen


def _branch(rng: random.Random, codes: set[str], index: int, key: str) -> tuple[dict, list[dict]]:
    branch = _Branch(rng, codes)
    n_clients = rng.randint(13, 14)
    names = rng.sample(v.FIRST_NAMES, n_clients * 3)
    surnames = rng.sample(v.SURNAMES, n_clients)
    for i in range(n_clients):
        companions = names[n_clients + 2 * i : n_clients + 2 * i + (2 if rng.random() < 0.7 else 1)]
        branch.client(names[i], surnames[i], companions)
    chosen = branch.select(rng.randint(140, 160))
    cited = {k for _, _, keys in chosen for k in keys}
    in_changes = {k for pair in branch.changes for k in pair[:2]}
    uncited = [k for k in range(len(branch.memories)) if k not in cited and k not in in_changes]
    must_keep = len(in_changes - cited)
    target = round(len(cited) * UNANSWERED_TARGET / (1 - UNANSWERED_TARGET))
    keep = max(0, min(len(uncited), round(target * 0.2)) - must_keep)
    kept = set(rng.sample(uncited, keep)) | cited | in_changes
    for _ in range(max(0, target - len(kept - cited), MIN_MEMORIES - len(kept))):
        user = rng.choice(branch.users)
        first = user.split(".")[0].capitalize()
        topic = rng.choice(v.CHATTER_TOPICS).format(town=rng.choice(v.TOWNS))
        kept.add(
            branch.note(rng.choice(t.CHATTER).format(n=first, topic=topic), branch.moment(0, SPAN_DAYS), user)
        )
    order = sorted(kept, key=lambda k: (branch.memories[k]["at"], k))
    ids = {k: f"td-{index:02d}-m{i:04d}" for i, k in enumerate(order)}
    memories = [
        {
            "id": ids[k],
            "content": branch.memories[k]["content"],
            "created_at": branch.memories[k]["at"].isoformat(),
            "user": branch.memories[k]["user"],
        }
        for k in order
    ]
    questions = []
    for kind, text, keys in chosen:
        latest = max(branch.memories[k]["at"] for k in keys)
        asked = latest + timedelta(
            days=rng.randint(0, 21), hours=rng.randint(1, 9), minutes=rng.randint(0, 59)
        )
        questions.append((asked, kind, text, sorted(ids[k] for k in keys)))
    questions.sort(key=lambda q: q[0])
    agent = {
        "key": key,
        "memories": memories,
        "questions": [
            {
                "id": f"td-{index:02d}-q{i:03d}",
                "text": text,
                "kind": kind,
                "evidence": ev,
                "asked_at": at.isoformat(),
            }
            for i, (at, kind, text, ev) in enumerate(questions)
        ],
    }
    changes = [{"original": ids[o], "change": ids[c], "what": what} for o, c, what in branch.changes]
    return agent, changes


def generate_with_changes(seed: int = 0) -> tuple[dict, list[dict]]:
    """The set for ``seed`` and its plan-change pairs (original note, later change note, what changed)."""
    rng = random.Random(seed)
    codes: set[str] = set()
    keys = rng.sample(v.BRANCHES, rng.randint(10, 12))
    agents, changes = [], []
    for index, branch in enumerate(keys):
        agent, pairs = _branch(rng, codes, index, f"branch-{branch}")
        agents.append(agent)
        changes.extend(pairs)
    return {"name": NAME, "agents": agents}, changes


def generate(seed: int = 0) -> dict:
    """The travel_desk set for ``seed``: 10-12 branches, each with its memories and questions."""
    return generate_with_changes(seed)[0]


def stats(data: dict) -> dict:
    """Totals, questions per kind and their shares, the share of memories no question cites, per agent."""
    memories = sum(len(a["memories"]) for a in data["agents"])
    questions = [q for a in data["agents"] for q in a["questions"]]
    per_kind = {kind: sum(q["kind"] == kind for q in questions) for kind in KINDS}
    cited = {e for q in questions for e in q["evidence"]}
    unanswered = sum(m["id"] not in cited for a in data["agents"] for m in a["memories"])
    return {
        "name": data["name"],
        "agents": len(data["agents"]),
        "memories": memories,
        "questions": len(questions),
        "per_kind": per_kind,
        "kind_shares": {k: round(c / max(1, len(questions)), 4) for k, c in per_kind.items()},
        "unanswered_share": round(unanswered / max(1, memories), 4),
        "per_agent": {
            a["key"]: {"memories": len(a["memories"]), "questions": len(a["questions"])}
            for a in data["agents"]
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.conversations.travel_desk", description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    json.dump(stats(generate(args.seed)), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
