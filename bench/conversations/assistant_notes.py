"""A conversational evaluation set: what a personal-assistant agent notes about its users across many chats.

    .venv/bin/python -m bench.conversations.assistant_notes --seed 0 --out /tmp/assistant_notes.json [--stats]

Each agent serves three or four users ("user" scopes a memory) over about ten months of support and planning
sessions: profiles and preferences, relatives and their birthdays, bookings and orders with reference codes,
appointments that move, projects with colleagues, trips, health routines and reminders. Plans change and the
later memory answers the question about the current plan; the same kinds of events recur for every user and on
other dates, so most memories are distractors for most questions. The format is bench/conversational.py's.
Deterministic for a seed; stdlib only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from collections import Counter

from bench.conversations import assistant_notes_vocab as V

NAME = "assistant_notes"
KINDS = ("single-hop", "multi-hop", "temporal", "paraphrase", "identifier")
SPAN_DAYS = 300
MAX_QUESTIONS = 180
MAX_MEMORIES = 400


def _day(d: dt.datetime) -> str:
    return f"{d.day} {d:%B}"


def _month(d: dt.datetime) -> str:
    return f"{d:%B %Y}"


class _User:
    def __init__(self, name: str, pronoun: str):
        self.name, self.key = name, name.lower()
        self.sub, self.obj, self.pos = V.PRONOUNS[pronoun]

    def ref(self, rng: random.Random) -> str:
        """How a memory names the user: by name, or as "The user" the way extractors often write."""
        return "The user" if rng.random() < 0.3 else self.name


class _Agent:
    """One memory store being written: memories by handle, questions citing handles, per-agent vocabulary."""

    def __init__(self, rng: random.Random, key: str, codes: set[str]):
        self.rng, self.key, self.codes = rng, key, codes
        self.start = dt.datetime(2023, 1, 9) + dt.timedelta(days=rng.randrange(0, 420))
        self.mems: list[tuple[dt.datetime, str, str]] = []
        self.questions: list[dict] = []
        self.sessions: dict[tuple[str, int], dt.datetime] = {}
        self.used: set[str] = set()
        self.unique_keys: Counter = Counter()

    def take(self, pool: list) -> object:
        """An item of pool no other memory of this agent has used, so a name points at one thing."""
        free = [x for x in pool if str(x) not in self.used]
        item = self.rng.choice(free)
        self.used.add(str(item))
        return item

    def code(self, make) -> str:
        """A reference code unique in the whole set: an identifier question finds exactly one memory."""
        while True:
            c = make(self.rng)
            if c not in self.codes:
                self.codes.add(c)
                return c

    def date(self, day: int, ahead: int = 0) -> dt.datetime:
        return self.start + dt.timedelta(days=day + ahead)

    def mem(self, user: _User, day: int, text: str) -> int:
        """Store an observation in the user's session of that day; returns its handle."""
        day = max(0, min(SPAN_DAYS - 1, day))
        when = self.sessions.setdefault(
            (user.key, day),
            self.date(day) + dt.timedelta(hours=self.rng.randint(7, 22), minutes=self.rng.randrange(60)),
        )
        self.mems.append((when, text, user.key))
        return len(self.mems) - 1

    def say(self, user: _User, day: int, templates: list[str], **fields) -> int:
        """Store one of the templates, filled in for the user; returns its handle."""
        fields.update(n=user.name, ref=user.ref(self.rng), sub=user.sub, obj=user.obj, pos=user.pos)
        return self.mem(user, day, self.rng.choice(templates).format(**fields))

    def ask(self, kind: str, text: str, evidence: list[int], identifier: str = "", unique: tuple = ()):
        """A question; kept only if its `unique` key (user, category, month) counts one event."""
        q = {"kind": kind, "text": text, "evidence": evidence, "unique": unique}
        if identifier:
            q["identifier"] = identifier
        self.questions.append(q)

    def in_month(self, user: _User, category: str, when: dt.datetime) -> tuple:
        """Count an event in the user's month; returns the key a "what in <month>" question needs."""
        key = (user.key, category, _month(when))
        self.unique_keys[key] += 1
        return key


def _time(rng: random.Random, first: int = 8, last: int = 20) -> str:
    return f"{rng.randint(first, last)}:{rng.choice(['00', '15', '30', '45'])}"


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _booking_code(rng: random.Random) -> str:
    a = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    return f"{rng.choice(a)}{rng.randint(2, 9)}{rng.choice(a)}-{rng.randint(10, 99)}{rng.choice(a)}"


def _diet(a: _Agent, u: _User) -> None:
    rng, diet, para = a.rng, *a.rng.choice(V.DIETS)
    a.ask("paraphrase", para.format(n=u.name), [a.mem(u, rng.randrange(0, 40), f"{u.ref(rng)} {diet}.")])
    m = a.say(u, rng.randrange(20, 200), V.DISLIKE, dislike=a.take(V.DISLIKES))
    a.ask("single-hop", f"Which ingredient does {u.name} want left out of recipes?", [m])


def _family(a: _Agent, u: _User) -> None:
    rng = a.rng
    for rel in rng.sample(V.RELATIONS, rng.choice([2, 2, 3])):
        r, bday = a.take(V.PEOPLE), _day(a.date(rng.randrange(0, 365)))
        m1 = a.say(u, rng.randrange(0, 120), V.BIRTHDAY, rel=rel, r=r, when=bday, age=rng.randint(6, 80))
        a.ask("temporal", f"When is {r}'s birthday?", [m1])
        m2 = a.say(u, rng.randrange(30, 280), V.LIVES_IN, r=r, city=rng.choice(V.CITIES))
        if rng.random() < 0.5:
            a.ask("multi-hop", f"Which city does {u.name}'s {rel} live in?", [m1, m2])
        m3 = a.say(u, rng.randrange(60, 290), V.GIFT, r=r, gift=a.take(V.GIFTS))
        if rng.random() < 0.5:
            a.ask("paraphrase", f"What gift idea does {u.name} have for {r}?", [m3])
        else:
            a.ask(
                "multi-hop",
                f"What present is {u.name} considering for the relative born on {bday}?",
                [m1, m3],
            )


def _restaurants(a: _Agent, u: _User) -> None:
    rng = a.rng
    for _ in range(rng.choice([1, 2, 3])):
        rest, day, k, code = (
            a.take(V.RESTAURANTS),
            rng.randrange(0, 270),
            rng.randint(2, 8),
            a.code(_booking_code),
        )
        when = a.date(day, rng.randint(2, 30))
        m = a.say(u, day, V.TABLE, rest=rest, k=k, when=_day(when), t=_time(rng, 18, 21), code=code)
        a.ask("identifier", f"Which restaurant is reservation {code} at?", [m], identifier=code)
        a.ask("single-hop", f"How many people is {u.name}'s table at {rest} for?", [m])
        if rng.random() < 0.35:
            when += dt.timedelta(days=rng.randint(1, 14))
            reason = rng.choice(V.DINNER_REASONS)
            m2 = a.say(u, day + rng.randint(1, 5), V.TABLE_MOVED, rest=rest, when=_day(when), reason=reason)
            a.ask("multi-hop", f"Why was reservation {code} moved?", [m, m2])
            m = m2
        month = a.in_month(u, "meal", when)
        if rng.random() < 0.5:
            a.ask("temporal", f"When is {u.name} eating at {rest}?", [m])
        else:
            a.ask("temporal", f"Which restaurant is {u.name} going to in {month[2]}?", [m], unique=month)


def _orders(a: _Agent, u: _User) -> None:
    rng = a.rng
    for _ in range(rng.choice([1, 2, 2, 3])):
        item, shop, day = a.take(V.ITEMS), rng.choice(V.SHOPS), rng.randrange(0, 280)
        code, due = a.code(lambda r: str(r.randint(3000000, 9999999))), a.date(day, rng.randint(3, 20))
        m = a.say(u, day, V.ORDER, item=item, shop=shop, code=code, when=_day(due))
        a.ask("identifier", f"What is in order {code}?", [m], identifier=code)
        thing = item.split(" ", 1)[1] if item.startswith(("a ", "an ")) else item
        if rng.random() < 0.5:
            new, reason = _day(a.date(day, rng.randint(21, 40))), rng.choice(V.DELAY_REASONS)
            m2 = a.say(
                u, day + rng.randint(2, 12), V.ORDER_LATE, thing=thing, shop=shop, reason=reason, when=new
            )
            a.ask("temporal", f"When should {u.name}'s {thing} arrive now?", [m2])
            a.ask("multi-hop", f"Why is order {code} running late?", [m, m2])
        else:
            a.ask("paraphrase", f"Which store is {u.name} getting the {thing} from?", [m])


def _appointments(a: _Agent, u: _User) -> None:
    rng = a.rng
    for kind, treats, title in rng.sample(V.APPOINTMENTS, 2):
        prov = f"{title} {a.take(V.SURNAMES)}" if title else f"{a.take(V.PEOPLE)} {a.take(V.SURNAMES)}"
        day = rng.randrange(0, 250)
        when = a.date(day, rng.randint(5, 30))
        m = latest = a.say(u, day, V.APPOINTMENT, akind=_a(kind), prov=prov, when=_day(when), t=_time(rng))
        a.ask("paraphrase", f"Who is {u.name} seeing for {treats}?", [m])
        moves = rng.choice([0, 1, 1, 2])
        for i in range(moves):
            reason, when = rng.choice(V.RESCHEDULE_REASONS), when + dt.timedelta(days=rng.randint(2, 12))
            texts = V.APPOINTMENT_AGAIN if i else V.APPOINTMENT_MOVED
            latest = a.say(u, day + 2 + 4 * i, texts, kind=kind, when=_day(when), t=_time(rng), reason=reason)
            if moves == 1:
                a.ask("single-hop", f"Why did {u.name} reschedule the {kind} appointment?", [latest])
        if latest != m and rng.random() < 0.6:
            a.ask("multi-hop", f"When is {u.name}'s appointment with {prov} now?", [m, latest])
        else:
            a.ask("temporal", f"When is {u.name}'s {kind} appointment now?", [latest])


def _work(a: _Agent, u: _User) -> None:
    rng = a.rng
    boss, rev, proj = (
        a.take(V.PEOPLE),
        a.take(V.PEOPLE),
        f"{a.take(V.PROJECTS)} {rng.choice(V.PROJECT_KINDS)}",
    )
    team, day = rng.choice(V.TEAMS), rng.randrange(0, 150)
    due = _day(a.date(day, rng.randint(40, 120)))
    m1 = latest = a.say(u, day, V.LEAD, boss=boss, proj=proj, when=due)
    m2 = a.say(u, day + rng.randint(5, 60), V.REVIEW, rev=rev, team=team, proj=proj)
    month = _month(a.date(day, 150))
    m3 = a.say(u, day + rng.randint(10, 120), V.RELOCATE, boss=boss, city=rng.choice(V.CITIES), month=month)
    a.ask("multi-hop", f"Which office is {u.name}'s manager moving to?", [m1, m3])
    a.ask("single-hop", f"Who from {team} is reviewing the {proj}?", [m2])
    a.ask("paraphrase", f"Who is {u.name}'s boss?", [m1])
    a.ask("single-hop", f"What did {boss} ask {u.name} to lead?", [m1])
    if rng.random() < 0.5:
        new = _day(a.date(day, rng.randint(125, 150)))
        latest = a.say(u, day + rng.randint(20, 100), V.SLIP, proj=proj, old=due, when=new)
    a.ask("temporal", f"When is the {proj} due now?", [latest])
    if rng.random() < 0.5:
        m5 = a.say(u, day + rng.randint(30, 140), V.LEAVE, rev=rev, when=_day(a.date(day, 160)))
        a.ask("multi-hop", f"When does the colleague reviewing {u.name}'s {proj} start leave?", [m2, m5])


def _flight(r: random.Random) -> str:
    return f"{r.choice(V.AIRLINES)}{r.randint(100, 9899)}"


def _travel(a: _Agent, u: _User) -> None:
    rng = a.rng
    for _ in range(rng.choice([1, 1, 2])):
        city, day, flight = a.take(V.CITIES), rng.randrange(0, 260), a.code(_flight)
        when = a.date(day, rng.randint(10, 35))
        m1 = latest = a.say(u, day, V.FLIGHT, city=city, when=_day(when), flight=flight, t=_time(rng))
        a.ask("identifier", f"Where does flight {flight} go?", [m1], identifier=flight)
        hotel, conf, k = (
            rng.choice(V.HOTEL_WORDS),
            a.code(lambda r: str(r.randint(10000000, 99999999))),
            rng.randint(2, 6),
        )
        m2 = a.say(u, day + rng.randint(0, 6), V.HOTEL, k=k, hotel=hotel, city=city, conf=conf)
        a.ask("identifier", f"Which hotel is confirmation {conf} for?", [m2], identifier=conf)
        if rng.random() < 0.5:
            a.ask("paraphrase", f"Where will {u.name} sleep on the {city} trip?", [m2])
        else:
            a.ask("single-hop", f"How many nights is {u.name} staying at {hotel}?", [m2])
        m3 = a.say(u, day + rng.randint(1, 9), V.SIGHT, sight=a.take(V.SIGHTS), city=city)
        a.ask(
            "multi-hop", f"What does {u.name} want to visit at the destination of flight {flight}?", [m1, m3]
        )
        if rng.random() < 0.3:
            when += dt.timedelta(days=rng.choice([-2, -1, 1, 2]))
            latest = a.say(u, day + 8, V.REBOOKED, city=city, flight=a.code(_flight), when=_day(when))
        month = a.in_month(u, "trip", when)
        a.ask("temporal", f"When does {u.name} fly to {city}?", [latest])
        a.ask("temporal", f"Which city is {u.name} travelling to in {month[2]}?", [latest], unique=month)


def _health(a: _Agent, u: _User) -> None:
    rng = a.rng
    (act, para), (d1, d2, d3) = rng.choice(V.ROUTINES), rng.sample(V.WEEKDAYS, 3)
    m1 = a.say(u, rng.randrange(0, 100), V.ROUTINE, act=act, d1=d1, d2=d2)
    if rng.random() < 0.4:
        m2 = a.say(u, rng.randrange(120, 280), V.ROUTINE_SWAP, d1=d1, d3=d3)
        a.ask("multi-hop", f"On which days does {u.name} fit in {para} now?", [m1, m2])
    else:
        a.ask("paraphrase", f"On which days of the week does {u.name} fit in {para}?", [m1])
    m = a.say(u, rng.randrange(0, 280), V.SUPPLEMENT, supp=rng.choice(V.SUPPLEMENTS))
    a.ask("single-hop", f"What supplement does {u.name} take?", [m])
    (injury, cause), day = rng.choice(V.INJURIES), rng.randrange(20, 290)
    m = a.say(u, day, V.INJURY, injury=injury, cause=cause, when=f"{_day(a.date(day))} {a.date(day).year}")
    if rng.random() < 0.5:
        a.ask("temporal", f"When did {u.name} say {u.sub} had {injury}?", [m])
    else:
        a.ask("temporal", f"What injury did {u.name} mention in {_month(a.date(day))}?", [m])


def _reminders(a: _Agent, u: _User) -> None:
    rng = a.rng
    for task, para in rng.sample(V.REMINDERS, rng.choice([2, 3])):
        day = rng.randrange(0, 280)
        when = _day(a.date(day, rng.randint(3, 25)))
        m = a.say(u, day, V.REMINDER, task=task, when=when)
        if rng.random() < 0.5:
            a.ask("paraphrase", f"When should the assistant prompt {u.name} about {para}?", [m])
        else:
            a.ask("single-hop", f"What did {u.name} ask to be reminded to do on {when}?", [m])


def _profile(a: _Agent, u: _User) -> None:
    rng = a.rng
    for i, (tool, use, para) in enumerate(rng.sample(V.TOOLS, 2)):
        m = a.say(u, rng.randrange(0, 200), V.TOOL, tool=tool, use=use)
        if i:
            a.ask("single-hop", f"What does {u.name} use {tool} for?", [m])
        else:
            a.ask("paraphrase", f"Which app does {u.name} use to {para}?", [m])
    for pref in rng.sample(V.TIME_PREFS, 2):
        a.mem(u, rng.randrange(0, 280), f"{u.ref(rng)} {pref}.")
    if rng.random() < 0.6:
        pet, kind = a.take(V.PET_NAMES), rng.choice(V.PET_KINDS)
        m = a.say(u, rng.randrange(0, 200), V.PET, kind=kind, pet=pet)
        a.ask("identifier", f"Whose {kind} is {pet}?", [m], identifier=pet)
        a.mem(u, rng.randrange(0, 280), f"{u.name} asked who could look after the {kind} for a weekend.")
    if rng.random() < 0.5:
        addr = f"{rng.randint(2, 180)} {a.take(V.STREETS)}"
        m = a.say(u, rng.randrange(0, 280), V.ADDRESS, addr=addr)
        a.ask("identifier", f"Who lives at {addr}?", [m], identifier=addr)
    friend, (hobby, topic) = a.take(V.PEOPLE), rng.choice(V.HOBBIES)
    m1 = a.say(u, rng.randrange(0, 200), V.FRIEND, friend=friend, hobby=hobby)
    m2 = a.say(u, rng.randrange(100, 290), V.FRIEND_MOVES, friend=friend, city=rng.choice(V.CITIES))
    a.ask("multi-hop", f"Where is the friend of {u.name} who got into {topic} moving?", [m1, m2])
    a.ask("single-hop", f"What has {u.name}'s friend {friend} taken up?", [m1])


def _extras(a: _Agent, u: _User) -> None:
    rng = a.rng
    if rng.random() < 0.6:
        band, day = a.take(V.BANDS), rng.randrange(0, 250)
        seats = a.code(lambda r: f"{r.choice('ABCDEFGH')}{r.randint(10, 40)}-{r.randint(10, 40)}")
        m = a.say(
            u, day, V.CONCERT, band=band, venue=rng.choice(V.VENUES), when=_day(a.date(day, 40)), seats=seats
        )
        a.ask("identifier", f"Which concert are seats {seats} for?", [m], identifier=seats)
        a.ask("single-hop", f"At which venue is {u.name} seeing {band}?", [m])
    for policy, para in rng.sample(V.POLICIES, rng.choice([0, 1, 1, 2])):
        code, day = a.code(lambda r: f"PL{r.randint(100000, 999999)}"), rng.randrange(0, 280)
        m = a.say(u, day, V.POLICY, policy=policy, code=code, when=_day(a.date(day, 30)))
        a.ask("identifier", f"What does policy {code} cover?", [m], identifier=code)
        a.ask("paraphrase", f"When does {u.name}'s cover for {para} come up for renewal?", [m])


STORYLINES = (_diet, _family, _restaurants, _orders, _appointments, _work, _travel, _health, _reminders)
STORYLINES += (_profile, _extras)


def _fillers(a: _Agent, users: list[_User], n: int) -> None:
    """Chatter and past events: memories no question cites, about the same people and places."""
    rng = a.rng
    # Places no question names, so a past visit never answers "where is X going in <month>".
    rests, cities = [r for r in V.RESTAURANTS if r not in a.used], [c for c in V.CITIES if c not in a.used]
    decks: dict[str, list[str]] = {}
    for _ in range(n):
        u, day = rng.choice(users), rng.randrange(0, SPAN_DAYS)
        if rng.random() < 0.35:
            past, akind = _day(a.date(day, -rng.randint(1, 6))), _a(rng.choice(V.APPOINTMENTS)[0])
            places = {"rest": rng.choice(rests), "shop": rng.choice(V.SHOPS), "city": rng.choice(cities)}
            a.say(u, day, V.PAST, when=past, akind=akind, **places)
        else:  # each user's chatter runs through the whole list before a line repeats
            if not decks.get(u.key):
                decks[u.key] = rng.sample(V.FILLER, len(V.FILLER))
            a.say(u, day, [decks[u.key].pop()], city=rng.choice(cities), proj=rng.choice(V.PROJECTS))


def _build_agent(rng: random.Random, key: str, names: list[tuple[str, str]], codes: set[str]) -> dict:
    a = _Agent(rng, key, codes)
    users = [_User(n, p) for n, p in names]
    a.used.update(n for n, _ in names)
    for u in users:
        for story in STORYLINES:
            story(a, u)
    _fillers(a, users, min(MAX_MEMORIES, max(150, rng.randint(230, 300))) - len(a.mems))
    order = sorted(range(len(a.mems)), key=lambda h: (a.mems[h][0], h))
    ids = {h: f"{key}-m{i + 1:04d}" for i, h in enumerate(order)}
    memories = [
        {"id": ids[h], "content": a.mems[h][1], "created_at": a.mems[h][0].isoformat(), "user": a.mems[h][2]}
        for h in order
    ]
    kept = [q for q in a.questions if not q["unique"] or a.unique_keys[q["unique"]] == 1]
    rng.shuffle(kept)
    kept = kept[:MAX_QUESTIONS]
    end = a.date(SPAN_DAYS + 1)
    questions = []
    for i, q in enumerate(kept):
        out = {
            "id": f"{key}-q{i + 1:03d}",
            "text": q["text"],
            "kind": q["kind"],
            "evidence": sorted(ids[h] for h in q["evidence"]),
            "asked_at": (end + dt.timedelta(hours=rng.randint(9, 20))).isoformat(),
        }
        if "identifier" in q:
            out["identifier"] = q["identifier"]
        questions.append(out)
    return {"key": key, "memories": memories, "questions": questions}


def generate(seed: int = 0) -> dict:
    """The whole set for a seed: ten agents, each with three or four users."""
    rng = random.Random(seed)
    pool = list(V.USERS)
    rng.shuffle(pool)
    codes: set[str] = set()
    agents = []
    for i in range(10):
        if len(pool) < 4:  # names repeat across agents only once the list is used up
            pool = list(V.USERS)
            rng.shuffle(pool)
        names = [pool.pop() for _ in range(rng.choice([3, 3, 3, 4]))]
        agents.append(_build_agent(rng, f"a{i + 1:02d}", names, codes))
    return {"name": NAME, "agents": agents}


def stats(data: dict) -> dict:
    """Counts: agents, memories, questions, and questions by kind."""
    qs = [q for a in data["agents"] for q in a["questions"]]
    return {
        "agents": len(data["agents"]),
        "memories": sum(len(a["memories"]) for a in data["agents"]),
        "questions": len(qs),
        "by_kind": dict(sorted(Counter(q["kind"] for q in qs).items())),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the set as JSON to this path")
    parser.add_argument("--stats", action="store_true", help="print counts by kind")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
    if args.stats or not args.out:
        print(json.dumps(stats(data), indent=1))


if __name__ == "__main__":
    main()
