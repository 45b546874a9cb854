"""A LoCoMo-like conversational memory set: friends' dated life events over months of chat sessions.

Each agent is one long conversation between two or three friends. Every session stores the observations a memory
system would extract from it (third person, dated by the session): jobs, moves, trips, hobbies, pets, purchases,
relatives, new friends, injuries, preferences, plans that later change, and small talk. Questions are asked after
the last session and cite the memories that answer them. The format is the one bench/conversational.py reads.

    python -m bench.conversations.life_log --seed 0 --out /tmp/life_log.json --stats
"""

import argparse
import json
import random
import re
from collections import Counter
from datetime import date, datetime, timedelta

from bench.conversations import life_log_vocab as V

NAME = "life_log"
KINDS = ("single-hop", "paraphrase", "multi-hop", "temporal", "identifier")
# Shares of the questions drawn per agent; a kind short of candidates gives its place to the others.
SHARES = {"single-hop": 0.24, "paraphrase": 0.2, "multi-hop": 0.19, "temporal": 0.24, "identifier": 0.13}
AGENTS = 10


def _day(d: date) -> str:
    return f"{d.day} {d:%B} {d.year}"


class _Person:
    def __init__(self, spec: str):
        self.name, gender = spec.split(":")
        self.pron = dict(V.PRONOUNS[gender])
        self.pron["self"] = {"f": "herself", "m": "himself", "n": "themself"}[gender]
        self.user = self.name.lower()


class _Conversation:
    """Builds one agent's memories session by session, and the candidate questions they answer."""

    def __init__(self, rng: random.Random, key: str):
        self.rng, self.key = rng, key
        names = rng.sample(V.PEOPLE, len(V.PEOPLE))
        self.speakers = [_Person(n) for n in names[: rng.choice((2, 2, 3))]]
        self.side = [tuple(n.split(":")) for n in names[len(self.speakers) :]]
        self.pools = {
            "pet": rng.sample(V.PET_NAMES, len(V.PET_NAMES)),
            "company": rng.sample(V.COMPANIES, len(V.COMPANIES)),
            "street": rng.sample(V.STREETS, len(V.STREETS)),
            "book": rng.sample(V.BOOKS, len(V.BOOKS)),
            "shopname": rng.sample(V.SHOP_NAMES, len(V.SHOP_NAMES)),
        }
        self.memories: list[dict] = []
        self.events: list[tuple[str, date, str, str]] = []  # (user, event day, memory id, description)
        self.candidates: list[tuple[str, str, list[str], str | None]] = []
        self.pending: list[tuple[int, int, object]] = []  # (due session, order, callback)
        self.used: set = set()
        self.latest: dict = {}  # (user, topic) -> memory id of the current state
        self.codes: set[str] = set()
        self.session = self.scheduled = 0
        self.now = datetime(2022, 1, 1)

    # -- helpers -------------------------------------------------------------------------------------
    def take(self, pool: str) -> str | None:
        return self.pools[pool].pop() if self.pools[pool] else None

    def fresh(self, key) -> bool:
        """True the first time a (person, topic, value) key is seen, so questions about it stay unambiguous."""
        if key in self.used:
            return False
        self.used.add(key)
        return True

    def code(self, make) -> str:
        while (c := make()) in self.codes:
            pass
        self.codes.add(c)
        return c

    def event_day(self) -> date:
        return self.now.date() - timedelta(days=self.rng.choice((0, 1, 1, 2, 3, 4, 5, 6)))

    def when(self, day: date) -> str:
        diff = (self.now.date() - day).days
        if diff == 0:
            return self.rng.choice(("today", "earlier today", "this morning"))
        if diff == 1:
            return "yesterday"
        return self.rng.choice((f"on {_day(day)}", f"on {_day(day)}", f"last {day:%A}"))

    def fill(self, template: str, p: _Person, day: date | None = None, **kw) -> str:
        other = self.rng.choice([s for s in self.speakers if s is not p])
        values = dict(P=p.name, F=other.name, **p.pron, **kw)
        if day and "when}" in template.lower():
            phrase = self.when(day)
            values["when"], values["When"] = phrase, phrase[0].upper() + phrase[1:]
        text = template.format(**values)
        return text[0].upper() + text[1:]

    def add(self, p: _Person, template: str, desc: str | None = None, **kw) -> str:
        """Stores an observation; one with a description is an event, dated a few days before the session."""
        mid, day = f"{self.key}-m{len(self.memories) + 1:04d}", self.event_day() if desc else None
        content = self.fill(template, p, day, **kw)
        self.memories.append(dict(id=mid, content=content, created_at=self.now.isoformat(), user=p.user))
        if day and "when}" in template.lower():
            self.events.append((p.user, day, mid, desc))
        return mid

    def ask(self, kind: str, p: _Person, text: str, evidence: list[str], ident: str | None = None, **kw):
        self.candidates.append((kind, self.fill(text, p, **kw), evidence, ident))

    def later(self, callback, lo: int = 1, hi: int = 6):
        self.scheduled += 1
        self.pending.append((self.session + self.rng.randint(lo, hi), self.scheduled, callback))

    # -- life events ---------------------------------------------------------------------------------
    def shape(self, event: str) -> str:
        return self.rng.choice(V.SHAPES[event])

    def job(self, p):
        role, role_p = self.rng.choice(V.ROLES)
        co, prev = self.take("company"), self.latest.get((p.user, "job"))
        if not co or not self.fresh((p.user, "role", role)):
            return
        shape = self.shape("job change" if prev else "job")
        a_role = ("an " if role[0] in "aeiou" else "a ") + role
        m = self.add(p, shape, f"starting at {co}", a_role=a_role, co=co, prev=prev and prev[1])
        self.ask("single-hop", p, "Which company did {P} join as a {role}?", [m], role=role)
        self.ask("paraphrase", p, "Where did {P} land a {role_p}?", [m], role_p=role_p)
        self.ask("temporal", p, "When did {P} start the job at {co}?", [m], co=co)
        self.ask("identifier", p, "Who was hired by {co}, and for what role?", [m], co, co=co)
        if prev:
            self.ask("multi-hop", p, "What job did {P} have before joining {co}?", [prev[0], m], co=co)
        self.latest[(p.user, "job")] = (m, co)

    def move(self, p):
        street, city = self.take("street"), self.rng.choice(V.CITIES)
        if not street or not self.fresh((p.user, "move", city)):
            return
        addr = f"{self.rng.randint(2, 180)} {street}"
        m = self.add(p, self.shape("move"), f"moving to {city}", addr=addr, city=city)
        self.ask("identifier", p, "Who moved to {addr}?", [m], addr, addr=addr)
        self.ask("single-hop", p, "What is the address of {P}'s new place in {city}?", [m], city=city)
        self.ask("paraphrase", p, "Which street does {P} live on since relocating to {city}?", [m], city=city)
        self.ask("temporal", p, "When did {P} move to {city}?", [m], city=city)

    def trip(self, p):
        city, (purpose, purpose_p) = self.rng.choice(V.CITIES), self.rng.choice(V.TRIP_PURPOSES)
        if not self.fresh((p.user, "trip", city)) or not self.fresh((p.user, "purpose", purpose)):
            return
        code = self.code(lambda: self.rng.choice(V.AIRLINES) + str(self.rng.randint(100, 9899)))
        shape = self.shape("trip")
        m = self.add(p, shape, f"the trip to {city}", city=city, code=code, purpose=purpose)
        if "{code}" in shape:
            self.ask("identifier", p, "Which city was flight {code} going to?", [m], code, code=code)
        self.ask("single-hop", p, "Why did {P} go to {city}?", [m], city=city)
        self.ask("paraphrase", p, "Which city did {P} visit for {purpose_p}?", [m], purpose_p=purpose_p)
        self.ask("temporal", p, "When did {P} travel to {city}?", [m], city=city)

    def hobby(self, p):
        i = self.rng.randrange(len(V.HOBBIES))
        (hobby, hobby_p), venue = V.HOBBIES[i], V.VENUE_WORDS[i]
        if not self.fresh((p.user, "hobby", hobby)):
            return
        dated = self.rng.random() < 0.6
        shape = self.shape("hobby dated" if dated else "hobby")
        m = self.add(p, shape, f"starting {hobby}", hobby=hobby, venue=venue)
        self.ask("single-hop", p, "Where does {P} go for {hobby}?", [m], hobby=hobby)
        self.ask("paraphrase", p, "Which place does {P} use for {hobby_p}?", [m], hobby_p=hobby_p)
        self.ask("identifier", p, "Who goes to {venue}, and for what?", [m], venue, venue=venue)
        if dated:
            self.ask("temporal", p, "When did {P} start {hobby}?", [m], hobby=hobby)

    def pet(self, p):
        (animal, animal_p), pet = self.rng.choice(V.ANIMALS), self.take("pet")
        if not pet or not self.fresh((p.user, "pet", animal)):
            return
        m = self.add(p, self.shape("pet"), f"adopting {pet}", animal=animal, pet=pet)
        self.ask("single-hop", p, "What is the name of the {animal} {P} adopted?", [m], animal=animal)
        self.ask("paraphrase", p, "What did {P} call the {animal_p} {they} took in?", [m], animal_p=animal_p)
        self.ask("temporal", p, "When did {P} adopt {pet}?", [m], pet=pet)
        if self.rng.random() < 0.5:
            self.later(lambda: self.pet_news(p, m, animal, pet))
        else:
            self.ask("identifier", p, "What kind of animal is {pet}?", [m], pet, pet=pet)

    def pet_news(self, p, adopted, animal, pet):
        news, question = self.rng.choice(V.PET_FOLLOWUPS)
        m = self.add(p, news, pet=pet)
        self.ask("multi-hop", p, question, [adopted, m], animal=animal)

    def purchase(self, p):
        (item, item_p), shop = self.rng.choice(V.ITEMS), self.rng.choice(V.SHOPS)
        if not self.fresh((p.user, "item", item)):
            return
        code = self.code(lambda: f"#{self.rng.randint(10000, 99999)}")
        price, shape = f"£{self.rng.randint(3, 120) * 5}", self.shape("purchase")
        a_item = ("an " if item[0] in "aeiou" else "a ") + item
        kw = dict(a_item=a_item, shop=shop, code=code, price=price)
        m = self.add(p, shape, f"buying the {item}", **kw)
        if "{code}" in shape:
            self.ask("identifier", p, "What was in order {code}?", [m], code, code=code)
            self.ask("single-hop", p, "Where did {P} order the {item} from?", [m], item=item)
            self.ask("paraphrase", p, "Which seller is {P} getting the {item_p} from?", [m], item_p=item_p)
        else:
            self.ask("single-hop", p, "How much did {P} pay for the {item}?", [m], item=item)
            self.ask("paraphrase", p, "What did the {item_p} cost {P}?", [m], item_p=item_p)
        self.ask("temporal", p, "When did {P} buy the {item}?", [m], item=item)

    def plan(self, p):
        (occ, occ_p), first = self.rng.choice(V.OCCASIONS), self.rng.choice(V.CITIES)
        if not self.fresh((p.user, "occasion", occ)):
            return
        m = self.add(p, self.shape("plan"), occ=occ, first=first)
        if self.rng.random() < 0.3:
            self.ask("single-hop", p, "Where is {P} spending {occ}?", [m], occ=occ)
            return
        self.later(lambda: self.plan_change(p, m, occ, occ_p, first), 1, 5)

    def plan_change(self, p, first_id, occ, occ_p, first):
        second = self.rng.choice([c for c in V.CITIES if c != first])
        reason = self.rng.choice(V.CHANGE_REASONS)
        kw = dict(occ=occ, Occ=occ[0].upper() + occ[1:], first=first, second=second, reason=reason)
        m = self.add(p, self.shape("plan change"), **kw)
        self.ask("single-hop", p, "Where is {P} going for {occ}?", [m], occ=occ)
        self.ask("paraphrase", p, "What destination did {P} finally pick for the {occ_p}?", [m], occ_p=occ_p)
        question = "Where did {P} first plan to go for {occ}, and why did that change?"
        self.ask("multi-hop", p, question, [first_id, m], occ=occ)
        self.ask("temporal", p, "When did {P} change the plans for {occ}?", [m], occ=occ)

    def preference(self, p):
        cat, cat_p, values = self.rng.choice(V.PREFERENCES)
        if not self.fresh((p.user, "pref", cat)):
            return
        value = self.rng.choice(values)
        m = self.add(p, self.shape("preference"), cat=cat, value=value)
        if self.rng.random() < 0.6:
            self.ask("single-hop", p, "What is {P}'s {cat}?", [m], cat=cat)
            self.ask("paraphrase", p, "Which {cat_p} does {P} like most?", [m], cat_p=cat_p)
            return
        self.later(lambda: self.preference_change(p, cat, cat_p, value, values), 2, 8)

    def preference_change(self, p, cat, cat_p, old, values):
        new = self.rng.choice([v for v in values if v != old])
        m = self.add(p, self.shape("preference change"), cat=cat, new=new, old=old)
        self.ask("single-hop", p, "What is {P}'s {cat} now?", [m], cat=cat)
        self.ask("paraphrase", p, "Which {cat_p} does {P} currently like most?", [m], cat_p=cat_p)
        self.ask("temporal", p, "When did {P}'s {cat} change?", [m], cat=cat)

    def meet(self, p):
        place = self.rng.choice(V.MEET_PLACES)
        if not self.side or not self.fresh((p.user, "met", place)):
            return
        friend, dated = self.side.pop()[0], self.rng.random() < 0.7
        shape = self.shape("meet dated" if dated else "meet")
        m = self.add(p, shape, f"meeting {friend}", f=friend, place=place)
        self.ask("single-hop", p, "Where did {P} meet {f}?", [m], f=friend)
        self.ask("paraphrase", p, "On what occasion did {P} first get to know {f}?", [m], f=friend)
        if dated:
            self.ask("temporal", p, "When did {P} meet {f}?", [m], f=friend)
        if self.rng.random() < 0.7:
            self.later(lambda: self.friend_news(p, [m], friend, place, "the friend"), 1, 8)

    def friend_news(self, p, chain, who, place, role):
        fact, question = self.rng.choice(V.FRIEND_FACTS)
        lead = self.rng.choice(("", "", "{P} heard that "))
        shopname = self.take("shopname") or "Second Spin"
        m = self.add(p, lead + fact, f=who, city=self.rng.choice(V.CITIES), shopname=shopname)
        self.ask("multi-hop", p, question.replace("the friend", role), [*chain, m], venue=place)
        if len(chain) == 1 and self.side and self.rng.random() < 0.35:
            partner = self.side.pop()[0]
            link = self.add(p, "{P} found out that {f} is going out with {g}.", f=who, g=partner)
            role = "the partner of the friend"
            self.later(lambda: self.friend_news(p, [chain[0], link], partner, place, role))

    def relative(self, p):
        name, gender = self.side.pop() if self.side else (None, "n")
        rel, city = self.rng.choice(V.RELATIVES.get(gender, ["cousin"])), self.rng.choice(V.CITIES)
        if not name or not self.fresh((p.user, "relative", rel)):
            return
        m = self.add(p, self.shape("relative"), rel=rel, n=name, city=city)
        self.ask("single-hop", p, "Where does {P}'s {rel} live?", [m], rel=rel)
        self.ask("paraphrase", p, "In which city is {P}'s {rel} based?", [m], rel=rel)
        self.later(lambda: self.relative_news(p, m, rel, name), 1, 8)

    def relative_news(self, p, intro, rel, name):
        news, question = self.rng.choice(V.FAMILY_EVENTS)
        lead = self.rng.choice(("", "News from {P}: ", "{P} was happy to share that "))
        m = self.add(p, lead + news, n=name, city=self.rng.choice(V.CITIES))
        self.ask("multi-hop", p, question, [intro, m], rel=rel)

    def injury(self, p):
        past, cause, base, question = self.rng.choice(V.INJURIES)
        if not self.fresh((p.user, "injury", base)):
            return
        past = past.format(**p.pron)
        m = self.add(p, self.shape("injury"), f"the day {p.name} {past}", past=past, cause=cause)
        self.ask("single-hop", p, "What happened to {P} after {cause}?", [m], cause=cause)
        self.ask("paraphrase", p, question, [m])
        self.ask("temporal", p, "When did {P} " + base + "?", [m])

    def gig(self, p):
        band, venue = self.rng.choice(V.BANDS), self.rng.choice(V.GIG_VENUES)
        if not self.fresh((p.user, "band", band)) or not self.fresh((p.user, "gig venue", venue)):
            return
        m = self.add(p, self.shape("gig"), f"the {band} concert", band=band, venue=venue)
        self.ask("single-hop", p, "Which band did {P} see at {venue}?", [m], venue=venue)
        self.ask("paraphrase", p, "Which group did {P} watch perform on stage at {venue}?", [m], venue=venue)
        self.ask("temporal", p, "When did {P} see {band} in concert?", [m], band=band)

    def race(self, p):
        city, distance = self.rng.choice(V.CITIES), self.rng.choice(("half marathon", "10K", "marathon"))
        if not self.fresh((p.user, "race", city)):
            return
        hours = {"10K": "", "half marathon": "1:", "marathon": "3:"}[distance]
        time = self.code(lambda: f"{hours}{self.rng.randint(38, 59)}:{self.rng.randint(0, 59):02d}")
        kw = dict(city=city, distance=distance, time=time)
        m = self.add(p, self.shape("race"), f"the {city} {distance}", **kw)
        self.ask("identifier", p, "Who finished a race in {time}, and which one?", [m], time, time=time)
        self.ask("single-hop", p, "What was {P}'s time in the {city} {distance}?", [m], **kw)
        self.ask("paraphrase", p, "How quickly did {P} complete the road race in {city}?", [m], **kw)
        self.ask("temporal", p, "When did {P} run the {distance} in {city}?", [m], **kw)

    def book(self, p):
        title, (opinion, _) = self.take("book"), self.rng.choice(V.OPINIONS)
        if not title:
            return
        m = self.add(p, self.shape("book"), title=title, opinion=opinion)
        self.ask("single-hop", p, "What did {P} think of '{title}'?", [m], title=title)
        self.ask("identifier", p, "Who has been reading '{title}'?", [m], title, title=title)

    def filler(self, p):
        self.add(p, self.rng.choice(V.FILLERS))

    # -- the conversation ----------------------------------------------------------------------------
    def run(self, start: datetime, sessions: int):
        weights = {
            self.job: 1, self.move: 2, self.trip: 4, self.hobby: 2, self.pet: 2, self.purchase: 4, self.plan: 3,
            self.preference: 3, self.meet: 3, self.relative: 2, self.injury: 2, self.gig: 2, self.race: 2,
            self.book: 1, self.filler: 5,
        }  # fmt: skip
        self.now = start
        for self.session in range(sessions + 1):
            due = sorted(t for t in self.pending if t[0] <= self.session or self.session == sessions)
            self.pending = [t for t in self.pending if t not in due]
            for _, _, callback in due:
                callback()  # type: ignore[operator]
            if self.session == sessions:
                break
            for p in self.speakers:
                for gen in self.rng.choices(list(weights), list(weights.values()), k=self.rng.randint(2, 5)):
                    gen(p)
            self.now += timedelta(days=self.rng.randint(3, 16), minutes=self.rng.randint(-180, 180))
        self.week_questions()

    def week_questions(self):
        """Temporal questions about a period: what a person did in the week before or after another event."""
        for user, day, anchor, desc in self.events:
            mine = [e for e in self.events if e[0] == user and e[2] != anchor]
            before = [e for e in mine if 1 <= (day - e[1]).days <= 7]
            after = [e for e in mine if 1 <= (e[1] - day).days <= 7]
            p = next(s for s in self.speakers if s.user == user)
            if len(before) == 1:
                self.ask(
                    "temporal", p, "What did {P} do in the week before {d}?", [before[0][2], anchor], d=desc
                )
            if len(after) == 1:
                self.ask(
                    "temporal", p, "What did {P} do in the week after {d}?", [anchor, after[0][2]], d=desc
                )


def _identifier_unique(ident: str, contents: list[str]) -> bool:
    pattern = re.compile(r"(?<![\w#:])" + re.escape(ident) + r"(?![\w:])")
    return sum(bool(pattern.search(c)) for c in contents) == 1


def _agent(rng: random.Random, key: str) -> dict:
    conv = _Conversation(rng, key)
    start = datetime(
        rng.choice((2022, 2023, 2024)), rng.randint(1, 12), rng.randint(1, 28), rng.randint(8, 21)
    )
    conv.run(start, rng.randint(28, 34))
    contents = [m["content"] for m in conv.memories]
    by_kind: dict[str, list] = {k: [] for k in KINDS}
    seen: set[str] = set()
    for kind, text, evidence, ident in conv.candidates:
        if text in seen or (ident and not _identifier_unique(ident, contents)):
            continue
        seen.add(text)
        by_kind[kind].append((text, evidence, ident))
    total = rng.randint(140, 170)
    chosen = []
    for kind in KINDS:
        pool = by_kind[kind]
        chosen += [(kind, *c) for c in rng.sample(pool, min(len(pool), round(total * SHARES[kind])))]
    rng.shuffle(chosen)
    asked = conv.now + timedelta(days=1)
    questions = []
    for i, (kind, text, evidence, ident) in enumerate(chosen, 1):
        q = {"id": f"{key}-q{i:03d}", "text": text, "kind": kind, "evidence": evidence}
        q["asked_at"] = (asked + timedelta(minutes=rng.randint(0, 2880))).replace(microsecond=0).isoformat()
        if ident:
            q["identifier"] = ident  # the code or proper noun that names the thing; in exactly one memory
        questions.append(q)
    return {"key": key, "memories": conv.memories, "questions": questions}


def generate(seed: int = 0) -> dict:
    """The life_log set for a seed: same seed, same set."""
    return {
        "name": NAME,
        "agents": [_agent(random.Random(f"{seed}-{i}"), f"a{i:02d}") for i in range(1, AGENTS + 1)],
    }


def stats(data: dict) -> dict:
    """Counts of agents, memories and questions, and questions by kind."""
    kinds = Counter(q["kind"] for a in data["agents"] for q in a["questions"])
    return {
        "agents": len(data["agents"]),
        "memories": sum(len(a["memories"]) for a in data["agents"]),
        "questions": sum(kinds.values()),
        "by_kind": dict(sorted(kinds.items())),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the set as JSON to this path")
    parser.add_argument("--stats", action="store_true", help="print counts by kind")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)
    if args.stats or not args.out:
        print(json.dumps(stats(data), indent=1))


if __name__ == "__main__":
    main()
