"""friends_chat: a generated set of long-running chats between two friends, one chat turn a memory.

Each agent is one conversation of 20-30 dated sessions over about a year (2023-2024): greetings, reactions and
small talk around first-person news (pets, jobs, trips, plans that change, books, health, moves), with
questions of five kinds asked after the last session. Run: python -m bench.conversations.friends_chat --seed 0 --stats
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from datetime import date, datetime, timedelta
from typing import Any

from bench.conversations import friends_chat_vocab as v

NAME = "friends_chat"
KINDS = ("single-hop", "paraphrase", "multi-hop", "temporal", "identifier")
AGENTS = 10
PER_KIND = 31


class Item:  # one piece of news told in a turn; questions refer to items, turns get ids later
    def __init__(self, speaker: str, text: str, when: date, term: str = "") -> None:
        self.speaker, self.text, self.when, self.term = speaker, text, when, term
        self.mid = ""


class Story:
    """Builds the news of one conversation and the questions it answers."""

    def __init__(self, rng: random.Random, people: tuple[str, str], days: list[date]) -> None:
        self.rng, self.people, self.days = rng, people, days
        self.slots: list[list[Item]] = [[] for _ in days]
        self.questions: list[tuple[str, str, list[Item], str]] = []
        self.trips: list[tuple[Item, str]] = []
        self.pools: dict[str, list[Any]] = {}
        self.events: list[tuple[str, Item]] = []
        self.groups: dict[tuple[str, str], list[Item]] = {}
        self.friends: dict[tuple[str, str], list[tuple[int, str, Item]]] = {}

    def take(self, name: str, pool: tuple[Any, ...] | list[Any]) -> Any:
        if name not in self.pools or not self.pools[name]:
            self.pools[name] = self.rng.sample(list(pool), len(pool))
        return self.pools[name].pop()

    def code(self, letters: int, digits: int, sep: str = "-") -> str:
        a = "".join(self.rng.choice("ABCDEFGHJKLMNPRSTVWXZ") for _ in range(letters))
        return a + sep + "".join(self.rng.choice("0123456789") for _ in range(digits))

    def say(self, s: int, speaker: str, text: str, phrase: str = "", term: str = "") -> Item:
        day = self.days[s]
        text = text.replace("{when}", phrase).replace("  ", " ").strip()
        for mark in ",.!":
            text = text.replace(" " + mark, mark).replace("," + mark, mark)
        text = text[0].upper() + text[1:]
        item = Item(speaker, text, v.resolve(phrase, day), term)
        self.slots[s].append(item)
        return item

    def ask(self, kind: str, text: str, items: list[Item], answer: str = "") -> None:
        self.questions.append((kind, text, items, answer))

    def opener(self) -> str:
        return self.rng.choice(v.OPENERS) + " "

    def phrase(self) -> str:
        return self.rng.choice(v.RELATIVE)

    def session(self, lo: float = 0.0, hi: float = 1.0) -> int:
        n, lo = len(self.days), min(lo, 1.0)
        return self.rng.randint(int(lo * (n - 1)), max(int(lo * (n - 1)), int(hi * (n - 1))))

    def later(self, s: int, gap: float) -> int:
        return self.session(s / (len(self.days) - 1) + gap, 1.0)

    def event(self, what: str, item: Item) -> None:
        self.events.append((what, item))

    # --- news of one kind each; {when} in a sentence is the relative time it is told with ------------------
    def pet(self, p: str) -> None:
        species, breed = self.take("breed", v.BREEDS)
        name, ph, s = self.take("pet", v.PET_NAMES), self.phrase(), self.session(0, 0.5)
        text = self.rng.choice(v.PET_1).format(when="{when}", o=self.opener(), b=breed, n=name)
        item = self.say(s, p, text, ph)
        self.ask("single-hop", f"What is the name of {p}'s {breed}?", [item], name)
        self.ask("paraphrase", f"Which kind of {species} joined {p}'s household?", [item], breed)
        self.ask("temporal", f"When did {p} bring {name} home?", [item], item.when.isoformat())
        self.event(f"{p} adopting {name}", item)
        trouble, s2 = self.rng.choice(v.PET_2), self.later(s, 0.1)
        if s2 > s:
            vet = self.say(s2, p, f"Spent a fortune at the vet because {name} {trouble}, never again.")
            self.ask("multi-hop", f"Why did {p}'s {breed} end up at the vet?", [item, vet], trouble)

    def job(self, p: str) -> None:
        company, role = self.take("company", v.COMPANIES), self.take("role", v.ROLES)
        s = self.session(0.05, 0.55)
        item = self.say(s, p, self.rng.choice(v.JOB_1).format(o=self.opener(), r=role, c=company))
        self.ask("single-hop", f"Which company did {p} join as a {role}?", [item], company)
        self.ask("paraphrase", f"Who is {p}'s current employer?", [item], company)
        self.ask("temporal", f"When did {p} land the job at {company}?", [item], v.month_of(item.when))
        self.event(f"{p} getting the {company} job", item)
        boss, (habit, habit_q) = self.take("relname", v.RELATIVE_NAMES), self.take("habit", v.BOSS_HABITS)
        s2 = min(len(self.days) - 1, s + self.rng.randint(1, 4))
        bitem = self.say(s2, p, self.rng.choice(v.JOB_2).format(b=boss, h=habit), term=boss)
        self.ask("single-hop", f"What does {p}'s boss {boss} do outside work?", [bitem], habit_q)
        self.ask("multi-hop", f"What is the pastime of {p}'s boss at {company}?", [item, bitem], habit_q)

    def relative(self, p: str) -> None:
        rel, rname = self.take("rel", v.RELATIONS), self.take("relname", v.RELATIVE_NAMES)
        role, city, s = self.take("role", v.ROLES), self.take("city", v.CITIES), self.session(0, 0.45)
        text = self.rng.choice(v.RELATIVE_1).format(o=self.opener(), r=rel, n=rname, j=role, c=city)
        intro = self.say(s, p, text)
        self.ask("single-hop", f"Which city did {p}'s {rel} {rname} move to for work?", [intro], city)
        s2, ph = self.later(s, 0.15), self.phrase()
        if s2 <= s:
            return
        visit = self.say(s2, p, self.rng.choice(v.RELATIVE_2).format(when="{when}", n=rname, c=city), ph)
        q = f"What does the {rel} that {p} visited in {v.month_of(visit.when)} do for a living?"
        self.ask("multi-hop", q, [intro, visit], role)
        self.ask("temporal", f"When did {p} go to see {rname} in {city}?", [visit], visit.when.isoformat())
        self.event(f"{p}'s visit to {rname}", visit)

    def trip(self, p: str) -> None:
        city, comp = self.take("city", v.CITIES), self.rng.choice(v.COMPANIONS)
        d, ph, s = self.rng.choice(v.TRIP_DETAILS), self.phrase(), self.session()
        text = self.rng.choice(v.TRIP_1).format(
            when="{when}", o=self.opener(), c=city, w=comp, d=d, D=d.capitalize()
        )
        item = self.say(s, p, text, ph)
        self.trips.append((item, city))
        self.ask("single-hop", f"Who went to {city} with {p}?", [item], comp)
        self.ask("temporal", f"When did {p} get back from {city}?", [item], item.when.isoformat())
        self.event(f"{p}'s trip to {city}", item)
        if s > 0 and self.rng.random() < 0.5:
            fl = self.code(2, 4, " ")
            line = f"Flight {fl} to {city} is booked, window seat and everything, I'm counting the days."
            f = self.say(s - 1, p, line, term=fl)
            self.ask("identifier", f"Where was {p}'s flight {fl} going?", [f], city)
            who = comp.replace("my ", f"{p}'s ")
            q = f"Which flight did {p} book for the trip with {who} that ended in {v.month_of(item.when)}?"
            self.ask("multi-hop", q, [item, f], fl)

    def plan(self, p: str) -> None:
        event, s = self.take("event", v.PLANNED_EVENTS), self.session(0, 0.6)
        c1, c2 = self.take("city", v.CITIES), self.take("city", v.CITIES)
        month = v.MONTHS[(self.days[s].month + 1) % 12]
        orig = self.say(
            s, p, f"So {event} is going to be in {c1} in {month}, I've started looking at flights."
        )
        s2, reason = self.later(s, 0.05), self.rng.choice(v.CHANGE_REASONS)
        if s2 <= s:
            return
        change = self.say(s2, p, self.rng.choice(v.PLAN_1).format(a=c1, b=c2, r=reason))
        whose = f"{p}'s " + event.removeprefix("my ").removeprefix("a ")
        self.ask("multi-hop", f"Where is {whose} taking place now?", [orig, change], c2)
        self.ask("single-hop", f"Why did {p} give up on {c1}?", [change], reason)
        self.ask("paraphrase", f"Which destination was {p} first considering for {month}?", [orig], c1)

    def purchase(self, p: str) -> None:
        (product, brand), code, s = self.take("product", v.PRODUCTS), self.code(2, 4), self.session()
        op = self.rng.choice(v.OPINIONS)
        text = self.rng.choice(v.PURCHASE_1).format(
            when="{when}", o=self.opener(), b=brand, k=code, t=product, op=op
        )
        item = self.say(s, p, text, self.phrase(), term=code)
        self.ask("identifier", f"What did {p} say about the {code} {product}?", [item], "")
        self.ask("single-hop", f"Which brand of {product} did {p} buy?", [item], brand)
        s2 = self.later(s, 0.1)
        if s2 > s and self.rng.random() < 0.6:
            broke = self.say(s2, p, self.rng.choice(v.PURCHASE_2).format(t=product))
            q = f"Which brand made the {product} that {p} had to send back?"
            self.ask("multi-hop", q, [item, broke], brand)

    def book(self, p: str) -> None:
        author, title, s = self.take("author", v.AUTHORS), self.take("title", v.BOOK_TITLES), self.session()
        verdict = self.rng.choice(v.BOOK_1)
        text = self.rng.choice(v.BOOK_2).format(when="{when}", t=title, a=author, v=verdict)
        item = self.say(s, p, text, self.phrase())
        self.groups.setdefault(("books", p), []).append(item)
        self.ask("single-hop", f"Which book by {author} did {p} read?", [item], title)
        self.ask("paraphrase", f"How did {p} feel about the novel {author} wrote?", [item], verdict)

    def film(self, p: str) -> None:
        film, cinema, s = self.take("film", v.FILMS), self.rng.choice(v.CINEMAS), self.session()
        said = self.rng.choice(("total snooze fest", "brilliant, go see it", "the ending was bonkers"))
        item = self.say(s, p, f"We saw {film} at {cinema} {{when}}, {said}.", self.phrase())
        self.groups.setdefault(("films", p), []).append(item)
        self.ask("single-hop", f"Where did {p} watch {film}?", [item], cinema)

    def concert(self, p: str) -> None:
        band, venue, s = self.take("band", v.BANDS), self.rng.choice(v.VENUES), self.session()
        text = f"Went to see {band} at {venue} {{when}} and my ears are still ringing, best gig of the year."
        item = self.say(s, p, text, self.phrase(), term=band)
        self.groups.setdefault(("bands", p), []).append(item)
        self.ask("identifier", f"Where did {p} see {band} play?", [item], venue)
        self.ask("temporal", f"When was the {band} gig {p} went to?", [item], item.when.isoformat())
        self.event(f"{p} seeing {band} live", item)

    def food(self, p: str) -> None:
        (cuisine, place), street = self.take("food", v.RESTAURANTS), self.take("street", v.STREETS)
        text = f"Tried that new {cuisine} place on {street}, {place}, {{when}}. Ordered way too much and regret nothing."
        item = self.say(self.session(), p, text, self.phrase(), term=place)
        self.ask("identifier", f"What kind of food does {place} serve?", [item], cuisine)
        q = f"On which road is the restaurant {p} tried for {cuisine} cooking?"
        self.ask("paraphrase", q, [item], street)

    def health(self, p: str) -> None:
        (done, base, how, part), ph, s = self.take("injury", v.INJURIES), self.phrase(), self.session()
        item = self.say(s, p, self.rng.choice(v.HEALTH_1).format(when="{when}", d=done, how=how), ph)
        self.ask("temporal", f"When did {p} {base}?", [item], item.when.isoformat())
        self.ask("single-hop", f"How did {p} {base}?", [item], how)
        self.ask("paraphrase", v.HEALTH_PARA[part].format(p=p), [item], how)
        self.event(f"{p}'s {part} trouble", item)

    def everyday(self, p: str, n: int, x: str) -> None:
        text, _, yl, q1, q2 = v.EVERYDAY[n]
        text = self.rng.choice((text, *v.VARIANTS[n]))
        y, price = self.rng.choice(v.LISTS[yl]), self.rng.choice(v.LISTS["price"])
        ph = self.phrase() if "{when}" in text else ""
        said = text.replace("{x}", x).replace("{y}", y).replace("{price}", price)
        item = self.say(self.session(), p, said, ph)
        self.ask("single-hop", q1.format(p=p, x=x), [item], y)
        if n in v.FRIEND_LINKS:
            self.friends.setdefault((p, x), []).append((n, y, item))
        self.ask("paraphrase", q2.format(p=p, x=x), [item], y)

    def coded(self, p: str) -> None:
        text, ys, q = self.rng.choice(v.CODED)
        c, y = self.code(2, 5, ""), self.rng.choice(ys)
        item = self.say(self.session(), p, text.format(c=c, y=y), term=c)
        self.ask("identifier", q.format(p=p, c=c), [item], y)

    def hobby(self, p: str) -> None:
        (hob, para, place), s = self.take("hobby", v.HOBBIES), self.session()
        text = f"{self.opener()}I signed up for {hob} at {place}, Tuesday evenings. First class was chaos."
        item = self.say(s, p, text)
        self.ask("single-hop", f"Where is {p} doing {hob}?", [item], place)
        self.ask("paraphrase", f"Which pastime involving {para} did {p} take up?", [item], hob)

    def activity(self, p: str) -> None:
        (past, base), ph, s = self.take("act", v.ACTIVITIES), self.rng.choice(v.RELATIVE[:3]), self.session()
        item = self.say(s, p, f"I {past} {{when}}, feeling very pleased with myself about it.", ph)
        self.ask("temporal", f"When did {p} {base}?", [item], item.when.isoformat())

    def move(self, p: str) -> None:
        hood, street, s = (
            self.rng.choice(v.NEIGHBOURHOODS),
            self.take("street", v.STREETS),
            self.session(0, 0.6),
        )
        plan = self.say(
            s, p, f"We're moving to {hood} next month, boxes everywhere already. Send help and snacks."
        )
        s2 = min(len(self.days) - 1, s + self.rng.randint(1, 3))
        done = self.say(
            s2, p, f"Finally in the new flat on {street}! No curtains yet and the boiler is weird."
        )
        self.ask("multi-hop", f"What street in {hood} did {p} move to?", [plan, done], street)
        self.ask("paraphrase", f"Which part of town was {p} relocating to?", [plan], hood)

    def rare_trip(self, p: str) -> None:
        place, code, s = self.take("rare", v.RARE_PLACES), self.code(3, 3, ""), self.session()
        text = f"Booked a little cabin near {place} for the autumn, the booking code is {code} in case I lose it again."
        item = self.say(s, p, text, term=code)
        self.ask("identifier", f"What is booking {code} for?", [item], place)
        self.ask("single-hop", f"Where did {p} book a cabin?", [item], place)


def _days(rng: random.Random) -> list[date]:
    n = rng.randint(20, 30)
    start = date(2023, rng.randint(1, 6), rng.randint(1, 28))
    span = rng.randint(330, 400)
    offs = sorted(rng.sample(range(1, span), n - 1))
    return [start] + [start + timedelta(days=o) for o in offs]


def _chat(rng: random.Random, story: Story, key: str) -> list[dict[str, Any]]:
    a, b = story.people
    memories: list[dict[str, Any]] = []
    for s, day in enumerate(story.days):
        t = datetime(day.year, day.month, day.day, rng.randint(8, 20), rng.randint(0, 59))
        first = rng.choice((a, b))
        other = b if first == a else a
        back = rng.choice(v.GREETING_REPLIES) + (" " + rng.choice(v.PROMPTS) if rng.random() < 0.5 else "")
        hello = [g for g in v.GREETINGS if not g.startswith(("Morning", "Evening")[t.hour < 17])]
        turns: list[tuple[str, Any]] = [(first, rng.choice(hello).format(o=other)), (other, back)]
        items = story.slots[s][:]
        rng.shuffle(items)
        runs = [[it for it in items if it.speaker == a], [it for it in items if it.speaker == b]]
        beats: list[list[Item]] = []
        for run in runs:  # a speaker's news told one or two at a time, the two speakers taking turns
            k = 0
            while k < len(run):
                n = 2 if k + 1 < len(run) and rng.random() < 0.55 else 1
                if n == 2 and len((run[k].text + run[k + 1].text).split()) > 56:
                    n = 1
                beats.append(run[k : k + n])
                k += n
        rng.shuffle(beats)
        if rng.random() < 0.3:
            beats.insert(rng.randint(0, len(beats)), [])
        for group in beats:
            if not group:
                turns.append((rng.choice((a, b)), rng.choice(v.SMALL_TALK)))
                continue
            speaker = group[0].speaker
            listener = b if speaker == a else a
            if rng.random() < 0.1:
                turns.append((listener, rng.choice(v.PROMPTS)))
            text = " ".join(it.text for it in group)
            if rng.random() < 0.85 and len(text.split()) < 48:
                text += " " + rng.choice(v.TAILS)
            turns.append((speaker, (group, text)))
            if rng.random() < 0.3:
                said = rng.choice(v.REACTIONS)
                turns.append((listener, said + " " + rng.choice(v.FOLLOWUPS) if rng.random() < 0.7 else said))
        turns.append((first, rng.choice(v.CLOSINGS)))
        if rng.random() < 0.6:
            turns.append((other, rng.choice(v.CLOSING_REPLIES)))
        for speaker, said in turns:
            mid = f"{key}-m{len(memories) + 1:03d}"
            if isinstance(said, tuple):
                for it in said[0]:
                    it.mid = mid
                said = said[1]
            content, user = f"{speaker}: {said}", speaker.lower()
            memories.append({"id": mid, "content": content, "created_at": t.isoformat(), "user": user})
            t += timedelta(minutes=rng.randint(1, 6), seconds=rng.randint(0, 59))
    return memories


def _questions(rng: random.Random, story: Story, key: str, memories: list[Any]) -> list[dict[str, Any]]:
    for p in story.people:
        for year in (2023, 2024):
            trips = [it for it, _ in story.trips if it.speaker == p and it.when.year == year]
            if len(trips) >= 2:
                story.ask("multi-hop", f"Which cities did {p} go on holiday to in {year}?", trips, "")
    for (what, p), items in story.groups.items():
        if len(items) >= 2:
            story.ask("multi-hop", v.GROUP_QUESTIONS[what].format(p=p), items, "")
    told = Counter((p, n, y) for (p, _), links in story.friends.items() for n, y, _ in links)
    for (p, _), links in story.friends.items():  # a friend picked out by one turn, asked about in another
        for (n1, y1, it1), (n2, y2, it2) in ((a, b) for a in links for b in links if a[0] != b[0]):
            if told[p, n1, y1] == 1:
                who = v.FRIEND_LINKS[n1][0].format(p=p, y=y1)
                story.ask("multi-hop*", v.FRIEND_LINKS[n2][1].format(p=p, who=who), [it1, it2], y2)
    for _ in range(8):
        (w1, x), (w2, y) = rng.sample(story.events, 2)
        if x.when != y.when and x.mid != y.mid:
            first = x if x.when < y.when else y
            story.ask("temporal", f"Which happened first, {w1} or {w2}?", [x, y], first.mid)
    contents, seen = [m["content"] for m in memories], set()
    pools: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS + ("multi-hop*",)}
    for kind, text, items, answer in story.questions:
        ev = list(dict.fromkeys(it.mid for it in items))
        if text in seen or (kind == "identifier" and sum(items[0].term in c for c in contents) != 1):
            continue
        if not kind.startswith("multi-hop") or len(ev) >= 2:
            seen.add(text)
            pools[kind].append({"text": text, "kind": kind.rstrip("*"), "evidence": ev, "answer": answer})
    out: list[dict[str, Any]] = []
    for kind in KINDS:  # friend links only fill up what the other multi-hop questions leave
        chosen = rng.sample(pools[kind], min(PER_KIND, len(pools[kind])))
        extra = pools.get(kind + "*", [])
        out += chosen + rng.sample(extra, min(PER_KIND - len(chosen), len(extra)))
    for n, q in enumerate(out, 1):
        q["id"] = f"{key}-q{n:03d}"
    return out


def _agent(seed: int, i: int) -> tuple[dict[str, Any], dict[str, str]]:
    rng = random.Random(f"{seed}-{i}")
    names = rng.sample(v.FIRST_NAMES, 2)
    story = Story(rng, (names[0], names[1]), _days(rng))
    for p in story.people:
        for fact in v.FACTS:
            getattr(story, fact)(p)
        repeats = [k for k, n in v.REPEATS.items() for _ in range(n)]
        for kind in rng.sample(repeats, rng.randint(20, 24)):
            getattr(story, kind)(p)
        for _ in range(rng.randint(5, 7)):
            story.coded(p)
        combos = [(n, x) for n, t in enumerate(v.EVERYDAY) for x in v.LISTS[t[1]]]
        for n, x in rng.sample(combos, rng.randint(175, 200)):
            story.everyday(p, n, x)
    key = f"f{i + 1:02d}"
    memories = _chat(rng, story, key)
    questions = _questions(rng, story, key, memories)
    answers = {q["id"]: q.pop("answer") for q in questions}
    questions = [
        {"id": q["id"], "text": q["text"], "kind": q["kind"], "evidence": q["evidence"]} for q in questions
    ]
    return {"key": key, "memories": memories, "questions": questions}, answers


def generate_with_answers(seed: int = 0) -> tuple[dict[str, Any], dict[str, str]]:
    """The set, and each question's expected answer (a day, a month, a memory id or a phrase; may be empty)."""
    agents, answers = [], {}
    for i in range(AGENTS):
        agent, ans = _agent(seed, i)
        agents.append(agent)
        answers.update(ans)
    return {"name": NAME, "agents": agents}, answers


def generate(seed: int = 0) -> dict[str, Any]:
    return generate_with_answers(seed)[0]


def stats(data: dict[str, Any]) -> dict[str, Any]:
    mems = [m for a in data["agents"] for m in a["memories"]]
    qs = [q for a in data["agents"] for q in a["questions"]]
    words = [len(m["content"].split()) for m in mems]
    return {
        "name": data["name"],
        "agents": len(data["agents"]),
        "memories": len(mems),
        "questions": len(qs),
        "per_kind": dict(sorted(Counter(q["kind"] for q in qs).items())),
        "mean_words_per_turn": round(sum(words) / len(words), 1),
        "min_words": min(words),
        "max_words": max(words),
        "chitchat_share": round(sum(v.is_chitchat(m["content"]) for m in mems) / len(mems), 3),
        "per_agent": {a["key"]: [len(a["memories"]), len(a["questions"])] for a in data["agents"]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the set as JSON to this path")
    parser.add_argument("--stats", action="store_true", help="print the set's statistics")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=1)
    if args.stats or not args.out:
        json.dump(stats(data), sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
