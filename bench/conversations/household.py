"""A long-term conversational memory set for a household assistant (LoCoMo-like), made deterministically.

Each agent is one household's assistant over about six months. Its memories are short third-person
observations about the family members (the users): the kids' schools, clubs and teachers, appointments that
get moved, pets and the vet, repairs and the tradespeople, food likes and allergies, relatives, neighbours and
babysitters, trips, and the order, booking and policy numbers the family hands over, plus small talk that
answers nothing. Its questions are of five kinds: single-hop (one fact, in the memory's words), paraphrase
(one fact, in other words), multi-hop (two memories chained through a person or a pet), temporal (a date, or
what happened in the week before a trip) and identifier (a code found in one memory only). A fact that changed
keeps its earlier memory, and a question about the current state cites only the later one.

    python -m bench.conversations.household --seed 0 --stats
    python -m bench.conversations.household --seed 0 --out household.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from datetime import datetime, timedelta

from bench.conversations import household_vocab as V

NAME = "household"
SHARES = {"single-hop": 0.24, "paraphrase": 0.2, "multi-hop": 0.19, "temporal": 0.24, "identifier": 0.13}
SPAN_DAYS = 182
FILL = {"L": "ABCDEFGHJKLMNPRSTUVWXYZ", "9": "0123456789"}
PERSON_NAMES = {w.lower() for n in V.ADULTS + V.KIDS + V.OTHERS + V.SURNAMES for w in n.split()}


def content_words(text: str) -> set[str]:
    """Rough stems (first five letters, no -s, -ed, -ing) of a text's words but stop words and person names."""
    out = set()
    for word in re.findall(r"[a-z]+", text.lower()):
        if len(word) < 2 or word in V.STOPWORDS or word in PERSON_NAMES:
            continue
        out.add(re.sub(r"(?<=...)(ing|ed|s)$", "", word)[:5])
    return out


def _day(d: datetime) -> str:
    return f"{d.day} {V.MONTHS[d.month - 1]}"


def _iso(d: datetime) -> str:
    return d.isoformat(timespec="seconds")


class _Household:
    """One agent's memories and candidate questions, built from its family's facts."""

    def __init__(self, rng: random.Random, key: str, codes: set[str]):
        self.rng, self.key, self.codes = rng, key, codes
        self.start = datetime(2025, 1, 1) + timedelta(days=rng.randrange(365))
        self.mems: list[dict] = []  # content, user, at (a datetime) and tag (for the week-before questions)
        self.cands: list[dict] = []  # candidate questions: kind, text, evidence, earlier (a changed fact's)
        self.contents, self.names = set(), set()
        self.surnames = rng.sample(V.SURNAMES, len(V.SURNAMES))

    def at(self, lo: float, hi: float) -> datetime:
        """A time on a day between lo and hi days after the start, in waking hours."""
        day = int(self.rng.uniform(lo, hi))
        return self.start + timedelta(days=day, seconds=self.rng.randrange(7 * 3600, 22 * 3600))

    def pick(self, key: str, **kw) -> str:
        return self.rng.choice(V.T[key]).format(**kw)

    def say(self, key: str, user: str, when: datetime, tag: tuple | None = None, **kw) -> int | None:
        return self.add(self.pick(key, **kw), user, when, tag)

    def fact(self, key: str, user: str, when: datetime, **kw) -> tuple[int | None, str]:
        """A memory from one of key's templates, and the single-hop question in that template's words."""
        i = self.rng.randrange(len(V.T[key]))
        m = self.add(V.T[key][i].format(**kw), user, when)
        return m, V.T[f"{key}_q"][i % len(V.T[f"{key}_q"])].format(**kw)

    def other(self, rel: str = "") -> str:
        pool = V.FEMALE if rel in V.FEMALE_RELATIONS else V.MALE if rel in V.MALE_RELATIONS else V.OTHERS
        name = self.rng.choice([n for n in pool if n not in self.names])
        self.names.add(name)
        return name

    def surname(self) -> str:
        if not self.surnames:
            self.surnames = self.rng.sample(V.SURNAMES, len(V.SURNAMES))
        return self.surnames.pop()

    def code(self, shape: str) -> str:
        """A new code of a shape (L a letter, 9 a digit), unique in the whole set."""
        c = "".join(self.rng.choice(FILL[ch]) if ch in FILL else ch for ch in shape)
        return self.code(shape) if c in self.codes else self.codes.add(c) or c

    def add(self, content: str, user: str, when: datetime, tag: tuple | None = None) -> int | None:
        content = content[0].upper() + content[1:]
        if content in self.contents:
            return None
        assert 40 <= len(content) <= 200, content
        self.contents.add(content)
        self.mems.append({"content": content, "user": user.lower(), "at": when, "tag": tag})
        return len(self.mems) - 1

    def ask(self, kind: str, text: str, evidence: list[int | None], earlier: int | None = None) -> None:
        if None in evidence or (
            kind == "paraphrase" and content_words(text) & content_words(self.mems[evidence[0]]["content"])
        ):
            return
        self.cands.append({"kind": kind, "text": text, "evidence": evidence, "earlier": earlier})

    def kid(self, p: str) -> None:
        r, at = self.rng, self.at
        school = r.choice(V.SCHOOLS)
        m, q = self.fact("school", p, at(0, 30), p=p, school=school)
        self.ask("single-hop", q, [m])
        self.ask("paraphrase", self.pick("school_p", p=p), [m])
        teacher = f"{r.choice(['Ms', 'Mr'])} {self.surname()}"
        m, q = self.fact("teacher", p, at(0, 40), p=p, who=teacher)
        if r.random() < 0.35:
            new = f"{r.choice(['Ms', 'Mr'])} {self.surname()}"
            later = self.say("teacher_change", p, at(60, 170), p=p, who=new, old=teacher)
            self.ask("single-hop", self.pick("teacher_now", p=p), [later], earlier=m)
        else:
            self.ask("single-hop", q, [m])
            self.ask("paraphrase", self.pick("teacher_p", p=p), [m])
        for act, venue, desc in r.sample(V.CLUBS, r.randint(1, 2)):
            day = r.choice(V.WEEKDAYS)
            m = self.say("club", p, at(0, 60), p=p, act=act, venue=venue, day=day)
            self.ask("single-hop", f"Where does {p} go for {act}?", [m])
            if r.random() < 0.7:
                c = self.say("coach", p, at(0, 120), who=self.other(), venue=venue)
                self.ask("multi-hop", self.pick("coach_m", p=p, act=act), [m, c])
            if r.random() < 0.3:
                new = r.choice([d for d in V.WEEKDAYS if d != day])
                later = self.say("club_change", p, at(90, 175), p=p, act=act, day=new, old=day)
                self.ask("single-hop", self.pick("club_now", p=p, act=act), [later], earlier=m)
            else:
                self.ask("single-hop", f"On which day does {p} have {act}?", [m])
                self.ask("paraphrase", self.pick("club_p", p=p, desc=desc), [m])

    def person(self, p: str, adult: bool, doctors: dict) -> None:
        r, at = self.rng, self.at
        for appt, desc in r.sample(V.APPOINTMENTS, r.randint(3, 5)):
            doc = doctors.setdefault(appt, f"Dr {self.surname()}")
            made = at(0, 150)
            date = made + timedelta(days=r.randint(6, 30))
            m = self.say("appt", p, made, p=p, appt=appt, doc=doc, date=_day(date))
            self.ask("single-hop", self.pick("appt_q", p=p, appt=appt), [m])
            self.ask("paraphrase", desc.format(p=p), [m])
            if r.random() < 0.4:
                moved = made + timedelta(days=r.uniform(1, (date - made).days - 1))
                new = date + timedelta(days=r.choice([3, 5, 7, 10, 14]))
                later = self.say("appt_move", p, moved, p=p, appt=appt, date=_day(new))
                self.ask("temporal", self.pick("appt_now", p=p, appt=appt), [later], earlier=m)
            else:
                self.ask("temporal", self.pick("appt_when", p=p, appt=appt), [m])
        if r.random() < 0.4:
            (food, desc), (food2, _) = r.sample(V.ALLERGENS, 2)
            m, q = self.fact("allergy", p, at(0, 80), p=p, food=food)
            if r.random() < 0.5:
                later = self.say("allergy_change", p, at(100, 175), p=p, food=food2, old=food)
                self.ask("single-hop", self.pick("allergy_now", p=p), [later], earlier=m)
            else:
                self.ask("single-hop", q, [m])
                self.ask("paraphrase", self.pick("allergy_p", p=p), [m])
        for food, desc in r.sample(V.FAVOURITES, r.randint(1, 2)):
            m, q = self.fact("fav", p, at(0, 175), p=p, food=food)
            self.ask("single-hop", q, [m])
            self.ask("paraphrase", f"Which {desc} should be bought for {p}?", [m])
        gift, desc = r.choice(V.GIFTS)
        m, q = self.fact("gift", p, at(0, 175), p=p, gift=gift)
        self.ask("single-hop", q, [m])
        self.ask("paraphrase", self.pick("gift_p", p=p), [m])
        m = self.say("bday", p, at(0, 175), p=p, date=_day(self.at(0, 365)))
        self.ask("temporal", self.pick("bday_q", p=p), [m])
        if adult and r.random() < 0.8:
            code = self.code("LL99-LLL")
            m = self.say("plate", p, at(0, 175), p=p, code=code)
            self.ask("identifier", self.pick("plate_q", p=p, code=code), [m])
        rels = V.RELATIONS if adult else V.KID_RELATIONS
        for rel in r.sample(rels, r.randint(4, 5)):
            self.relative(p, rel)

    def relative(self, p: str, rel: str) -> None:
        r, at = self.rng, self.at
        who = self.other(rel)
        pets = [x for x in V.PETS if x not in self.names]
        if pets and r.random() < 0.3:
            species, breed, _ = r.choice(V.SPECIES)
            pet = r.choice(pets)
            self.names.add(pet)
            link = self.say("link_pet", p, at(0, 175), p=p, rel=rel, who=who, breed=breed, pet=pet)
            doc, clinic = f"{self.other()} {self.surname()}", f"the {r.choice(V.SURNAMES)} vet practice"
            vet = self.say("vet", p, at(0, 175), pet=pet, doc=doc, clinic=clinic)
            self.ask("multi-hop", self.pick("vet_m", p=p, rel=rel, species=species), [link, vet])
        else:
            link = self.say("link", p, at(0, 175), p=p, rel=rel, who=who)
        for attr in r.sample(["city", "collect", "job", "rbday"], r.randint(2, 4)):
            if attr == "city":
                m, q = self.fact("city", p, at(0, 175), who=who, city=r.choice(V.CITIES))
                self.ask("single-hop", q, [m])
                self.ask("paraphrase", self.pick("city_p", who=who), [m])
            elif attr == "collect":
                thing, _ = r.choice(V.COLLECTS)
                m, q = self.fact("collect", p, at(0, 175), who=who, thing=thing)
                self.ask("single-hop", q, [m])
                self.ask("paraphrase", self.pick("collect_p", who=who), [m])
            elif attr == "job":
                m, q = self.fact("job", p, at(0, 175), who=who, job=r.choice(V.JOBS))
                self.ask("single-hop", q, [m])
            else:
                m = self.say("rbday", p, at(0, 175), who=who, date=_day(at(0, 365)))
                self.ask("temporal", f"When is {who}'s birthday?", [m])
            self.ask("multi-hop", self.pick(f"{attr}_m", p=p, rel=rel), [link, m])

    def pets(self, family: list[str]) -> None:
        r, at = self.rng, self.at
        for species, breed, _ in r.sample(V.SPECIES, r.randint(1, 2)):
            pet, p = r.choice([x for x in V.PETS if x not in self.names]), r.choice(family)
            self.names.add(pet)
            doc, clinic = f"{self.other()} {self.surname()}", f"the {r.choice(V.CITIES)} Road vet clinic"
            m = self.add(
                f"{p} walks the family {breed}, {pet}, most mornings before work and school.", p, at(0, 60)
            )
            v = self.say("pet_vet", p, at(0, 175), pet=pet, doc=doc, clinic=clinic)
            self.ask("multi-hop", f"Which vet looks after the {species} that {p} walks?", [m, v])
            self.ask("single-hop", f"Which vet is {pet} registered with?", [v])
            m = self.say("vacc", p, at(0, 170), pet=pet, date=_day(at(20, 200)))
            self.ask("temporal", self.pick("vacc_q", pet=pet), [m])
            code = self.code("MC999999999")
            m = self.say("chip", p, at(0, 175), pet=pet, code=code)
            self.ask("identifier", self.pick("chip_q", pet=pet, code=code), [m])

    def repair(self, p: str, job: tuple, when: datetime, tag: tuple | None = None) -> int | None:
        r, (trade, issue, desc) = self.rng, job
        who = f"{self.other()} {self.surname()}"
        if r.random() < 0.35:
            nb, price, days = self.other(), r.randrange(80, 900, 10), timedelta(days=r.uniform(1, 7))
            rec = self.say("recommend", p, when - days * 3, nb=nb, trade=trade, who=who)
            q = self.say("quote", p, when - days, who=who, issue=issue, price=price)
            self.ask("multi-hop", f"How much did the {trade} that {nb} recommended quote?", [rec, q])
        m = self.say("repair", p, when, tag, p=p, who=who, trade=trade, issue=issue, date=_day(when))
        self.ask("single-hop", f"Who fixed the {issue}?", [m])
        self.ask("paraphrase", self.pick("repair_p", desc=desc), [m])
        self.ask("temporal", self.pick("repair_when", trade=trade, issue=issue), [m])
        if r.random() < 0.6:
            code = self.code("INV-99999")
            later = when + timedelta(days=r.uniform(0.1, 9))
            i = self.say("invoice", p, later, who=who, issue=issue, code=code)
            self.ask("identifier", self.pick("invoice_q", issue=issue, code=code), [i])
        return m

    def household(self, adults: list[str], kids: list[str]) -> None:
        r, at = self.rng, self.at
        family = adults + kids
        self.pets(family)
        repairs = r.sample(V.REPAIRS, len(V.REPAIRS))
        for job in repairs[: r.randint(5, 7)]:
            self.repair(r.choice(adults), job, at(35, 178), ("repair",))
        spare = repairs[7:]
        for item, desc in r.sample(V.ITEMS, r.randint(10, 14)):
            p, shop = r.choice(family), r.choice(V.SHOPS)
            code = self.code(r.choice(["LL99999", "99999-LL", "ORD-9999L"]))
            m = self.say("order", p, at(0, 175), p=p, item=item, shop=shop, code=code)
            self.ask("identifier", self.pick("order_q", p=p, item=item, code=code), [m])
            self.ask("paraphrase", f"Which {desc} did the family buy for {p}?", [m])
            if r.random() < 0.6:
                date = _day(self.mems[m]["at"] + timedelta(days=r.randint(2, 12)))
                text = f"{shop} says the {item} for {p} will arrive on {date}."
                d = self.add(text, p, self.mems[m]["at"] + timedelta(hours=2))
                self.ask("temporal", f"When will {p}'s {item} arrive?", [d])
        for policy in r.sample(V.POLICIES, r.randint(2, 4)):
            p, code = r.choice(adults), self.code(r.choice(["LLL-999999", "PL9999999L"]))
            m = self.say("policy", p, at(0, 175), p=p, policy=policy, code=code)
            self.ask("identifier", self.pick("policy_q", policy=policy, code=code), [m])
        for utility in r.sample(V.UTILITIES, r.randint(2, 4)):
            p = r.choice(adults)
            m = self.say("bill", p, at(0, 175), p=p, utility=utility, code=self.code("AC-99999999"))
            self.ask("identifier", self.pick("bill_q", utility=utility), [m])
        day = r.choice(V.WEEKDAYS[:5])
        sitter, p = self.other(), r.choice(adults)
        m = self.say("sitter", p, at(0, 60), p=p, who=sitter, day=day)
        if r.random() < 0.5:
            later = self.say("sitter_change", p, at(90, 175), who=self.other(), old=sitter)
            self.ask("single-hop", self.pick("sitter_now"), [later], earlier=m)
        else:
            self.ask("single-hop", self.pick("sitter_q", day=day), [m])
        for n, dest in enumerate(r.sample(V.DESTINATIONS, r.randint(2, 3))):
            p = r.choice(adults)
            booked = at(n * 45, n * 45 + 40)
            leave = booked + timedelta(days=r.randint(20, 45))
            back = leave + timedelta(days=r.randint(3, 10))
            code = self.code("LL9LL9")
            m = self.say("trip", p, booked, p=p, dest=dest, date=_day(leave), end=_day(back), code=code)
            self.ask("identifier", self.pick("trip_q", dest=dest), [m])
            change = r.random()
            changed = booked + timedelta(days=r.uniform(2, (leave - booked).days - 8))
            reason = r.choice(V.TRIP_CHANGE_REASONS)
            if change < 0.2:
                later = self.say("trip_cancel", p, changed, dest=dest, reason=reason)
                self.ask("single-hop", f"Is the trip to {dest} still going ahead?", [later], earlier=m)
                continue
            if change < 0.4:
                leave = leave + timedelta(days=r.randint(7, 21))
                later = self.say("trip_move", p, changed, p=p, dest=dest, date=_day(leave), reason=reason)
                self.ask("temporal", f"When does the trip to {dest} leave now?", [later], earlier=m)
                m = later  # the trip's date is now in this memory
            else:
                self.ask("temporal", self.pick("trip_when", dest=dest), [m])
            base = (leave - self.start).days
            kid = r.choice(kids)
            incidents = [w for w in V.INCIDENTS if not any(w in c for c in self.contents)]
            what = r.choice(incidents)
            i = self.say("incident", kid, at(base - 6, base), ("incident", kid), p=kid, what=what)
            self.span(self.pick("span", p=kid, dest=dest), [m, i], leave)
            if spare:
                f = self.repair(p, spare.pop(), at(base - 6, base), ("repair",))
                self.span(self.pick("span_repair", dest=dest), [m, f], leave)

    def span(self, text: str, evidence: list[int | None], leave: datetime) -> None:
        if None in evidence:
            return
        tag, day = self.mems[evidence[-1]]["tag"], leave.replace(hour=0, minute=0, second=0)
        if sum(x["tag"] == tag and day - timedelta(days=7) <= x["at"] < day for x in self.mems) == 1:
            self.cands.append(
                {"kind": "temporal", "text": text, "evidence": evidence, "earlier": None, "span": 1}
            )

    def small_talk(self, family: list[str]) -> None:
        """Chat that answers nothing, about 15% of all the memories (a repeated line is drawn again)."""
        target = len(self.mems) + round(len(self.mems) * 0.15 / 0.85)
        while len(self.mems) < target:
            p = self.rng.choice(family)
            self.add(self.rng.choice(V.SMALL_TALK).format(p=p), p, self.at(0, SPAN_DAYS))

    def build(self, n_questions: int) -> tuple[dict, list[dict]]:
        r = self.rng
        self.names.update(V.ADULTS + V.KIDS)
        adults, kids = r.sample(V.ADULTS, 2), r.sample(V.KIDS, r.randint(2, 3))
        doctors: dict = {}  # one practitioner per kind of appointment in a household
        for p in adults + kids:
            self.person(p, p in adults, doctors)
            if p in kids:
                self.kid(p)
        self.household(adults, kids)
        self.small_talk(adults + kids)
        order = sorted(range(len(self.mems)), key=lambda i: self.mems[i]["at"])
        ids = {i: f"{self.key}-m{n + 1}" for n, i in enumerate(order)}
        memories = []
        for i in order:
            m = self.mems[i]
            memories.append(
                {"id": ids[i], "content": m["content"], "created_at": _iso(m["at"]), "user": m["user"]}
            )
        chosen = self.choose(n_questions)
        questions, changes = [], []
        for n, c in enumerate(chosen):
            last = max(self.mems[e]["at"] for e in c["evidence"])
            asked = last + timedelta(days=r.uniform(0.5, 21), minutes=r.randrange(60))
            qid = f"{self.key}-q{n + 1}"
            evidence = [ids[e] for e in c["evidence"]]
            questions.append(
                {
                    "id": qid,
                    "text": c["text"],
                    "kind": c["kind"],
                    "evidence": evidence,
                    "asked_at": _iso(asked),
                }
            )
            if c["earlier"] is not None:
                changes.append({"question": qid, "earlier": ids[c["earlier"]], "later": evidence[0]})
        return {"key": self.key, "memories": memories, "questions": questions}, changes

    def choose(self, n: int) -> list[dict]:
        """n questions, each kind its share of them (largest remainder), no text asked twice."""
        r = self.rng
        pools: dict[str, list[dict]] = {k: [] for k in SHARES}
        seen: set[str] = set()
        for c in self.cands:
            if c["text"] not in seen:
                seen.add(c["text"])
                pools[c["kind"]].append(c)
        want = {k: int(n * s) for k, s in SHARES.items()}
        by_remainder = sorted(SHARES, key=lambda k: n * SHARES[k] - want[k], reverse=True)
        for k in by_remainder[: n - sum(want.values())]:
            want[k] += 1
        chosen = []
        for kind, pool in pools.items():
            # changed facts and spans first: they are the scarce ones
            first = [c for c in pool if c["earlier"] is not None or c.get("span")]
            rest = [c for c in pool if c not in first]
            r.shuffle(rest)
            take = (first + rest)[: want[kind]]
            assert len(take) == want[kind], (self.key, kind, len(pool), want[kind], len(self.mems))
            chosen.extend(take)
        r.shuffle(chosen)
        return chosen


def generate_with_changes(seed: int = 0) -> tuple[dict, list[dict]]:
    """The set, and for each question about a changed fact its earlier and later memory."""
    rng = random.Random(f"{NAME}:{seed}")
    codes: set[str] = set()
    agents, changes = [], []
    for n in range(rng.randint(10, 11)):
        agent, ch = _Household(rng, f"h{n + 1:02d}", codes).build(rng.randint(135, 160))
        agents.append(agent)
        changes.extend(ch)
    return {"name": NAME, "agents": agents}, changes


def generate(seed: int = 0) -> dict:
    """The household set for a seed: the same for the same seed, plain JSON-able data."""
    return generate_with_changes(seed)[0]


def stats(data: dict) -> dict:
    agents = data["agents"]
    questions = [q for a in agents for q in a["questions"]]
    evidence = sum(len(q["evidence"]) for q in questions) / max(len(questions), 1)
    return {
        "name": data["name"],
        "agents": len(agents),
        "memories": sum(len(a["memories"]) for a in agents),
        "questions": len(questions),
        "by_kind": dict(sorted(Counter(q["kind"] for q in questions).items())),
        "evidence_per_question": round(evidence, 3),
        "users": len({(a["key"], m["user"]) for a in agents for m in a["memories"]}),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the set to this JSON file")
    parser.add_argument("--stats", action="store_true", help="print the set's statistics")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
    if args.stats or not args.out:
        print(json.dumps(stats(data), indent=2))


if __name__ == "__main__":
    main()
