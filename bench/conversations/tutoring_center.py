"""Conversational memory set: an AI assistant at private tutoring centres.

Each agent is one tutoring centre with its own memory store. Its memories are short, dated, third-person notes
of the kind an assistant keeps after chatting with families and staff over several months: facts about
students (year group, school, weakest subject, goals, learning needs, hobbies, where they moved from, how they
learn best), about parents and guardians (job, how they like to be contacted) and tutors (background, day off,
subjects), relations between people (siblings, parent and child, tutor and student, study partners), plans
that change (a session moved, a mock exam rescheduled; the original note and the change note are both kept),
dated events, payments, bookings and room codes, and everyday chatter that answers no question.

Questions come in five kinds:

* ``single-hop``: answered by one memory and asked with some of its words;
* ``paraphrase``: answered by one memory and asked in other words; the share of the question's content words
  found in the memory is capped (``PARAPHRASE_MAX_SHARED`` words and ``PARAPHRASE_MAX_RATIO``);
* ``multi-hop``: needs two memories; the person asked about is described by a relation or an event
  ("Ravi's sister", "the student who moved here from Leeds"), never named;
* ``temporal``: when something happened, what happened in the week before or after an event, the current
  or original slot of a plan that changed;
* ``identifier``: names an invoice, booking, room, voucher or equipment code exactly as written in the note.

Everything is drawn from a seeded ``random.Random``: the same seed gives the same set.
``python -m bench.conversations.tutoring_center --seed 0`` prints the set's statistics.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from bench.conversations import tutoring_center_vocab as V

NAME = "tutoring_center"
SHARES = {"single-hop": 0.22, "paraphrase": 0.18, "multi-hop": 0.20, "temporal": 0.22, "identifier": 0.18}

AGENTS = (10, 12)
QUESTIONS_PER_AGENT = (140, 150)
MEMORIES_PER_AGENT = (200, 258)
UNANSWERED_SHARE = (0.215, 0.235)
PARAPHRASE_MAX_SHARED = 2
PARAPHRASE_MAX_RATIO = 0.4
CENTRE_USER = "centre"
FAMILIES_PER_AGENT = 27
TUTORS_PER_AGENT = 9
SPAN_DAYS = 180
MIN_GAP_DAYS = 10  # dated notes about one student are kept this far apart, except a before/after pair

STOPWORDS = frozenset(
    """what which who whom whose when where why how does did done the and for with from about their they them
    has have had been this that there its into any are was were will would can could should not also than
    then very some more most other such only just over our you your she her his him each both out off own
    same too yet after before while during now""".split()
)

_ARTICLE_RE = re.compile(r"\ba ([AEIOUaeiou])")
_CODE_RE = re.compile(r"\b[A-Z0-9]+(?:-[A-Z0-9]+)*\b")


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:5]


def content_stems(text: str) -> set[str]:
    """Crude stems of the content words of ``text`` (stop words and words under 3 letters left out)."""
    words = re.findall(r"[a-zà-ÿ0-9]+", text.lower())
    return {_stem(w) for w in words if len(w) >= 3 and w not in STOPWORDS}


def paraphrase_overlap(question: str, memory: str) -> tuple[int, float]:
    """(content stems shared, their share of the question's content stems)."""
    q = content_stems(question)
    shared = len(q & content_stems(memory))
    return shared, (shared / len(q) if q else 0.0)


def within_paraphrase_cap(question: str, memory: str) -> bool:
    shared, ratio = paraphrase_overlap(question, memory)
    return shared <= PARAPHRASE_MAX_SHARED and ratio <= PARAPHRASE_MAX_RATIO


def codes_in(text: str) -> set[str]:
    """Tokens that mix capital letters and digits, e.g. invoice or room codes."""
    return {t for t in _CODE_RE.findall(text) if any(c.isdigit() for c in t) and any(c.isalpha() for c in t)}


def _base(phrase: str) -> str:
    """Third-person verb phrase to the form that follows "they"."""
    head, _, rest = phrase.partition(" ")
    irregular = {"is": "are", "has": "have", "was": "were", "does": "do", "goes": "go"}
    if head in irregular:
        head = irregular[head]
    elif head.endswith("ies"):
        head = head[:-3] + "y"
    elif head.endswith(("sses", "shes", "ches", "xes")):
        head = head[:-2]
    elif head.endswith("s") and not head.endswith("ss"):
        head = head[:-1]
    return f"{head} {rest}" if rest else head


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _tidy(text: str) -> str:
    """Capitalised, with "an" before vowels and no "on" before "tomorrow" or "this coming"."""
    text = text.replace(" on tomorrow", " tomorrow").replace(" on this coming", " this coming")
    return _cap(_ARTICLE_RE.sub(r"an \1", text))


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _clock(t: time, rng: random.Random) -> str:
    if rng.random() < 0.3:
        return t.strftime("%H:%M")
    hour = t.hour % 12 or 12
    ampm = "am" if t.hour < 12 else "pm"
    return f"{hour}{ampm}" if t.minute == 0 else f"{hour}:{t.minute:02d}{ampm}"


def _abs_date(d: date, rng: random.Random) -> str:
    month = V.MONTHS[d.month - 1]
    weekday = V.WEEKDAYS[d.weekday()]
    return rng.choice(
        [
            f"{d.day} {month}",
            f"{d.day}/{d.month}/{d.year}",
            f"{d.day} {month} {d.year}",
            f"{month} {_ordinal(d.day)}",
            d.isoformat(),
            f"{weekday} {d.day} {month}",
        ]
    )


def past_phrase(event: date, noted: date, rng: random.Random) -> str:
    """How a note written on ``noted`` refers to ``event`` (on or before it); resolvable from the note's date."""
    gap = (noted - event).days
    weekday = V.WEEKDAYS[event.weekday()]
    options = [f"on {_abs_date(event, rng)}"] * 3
    if gap == 0:
        options += ["today", "earlier today"]
    elif gap == 1:
        options += ["yesterday", "yesterday"]
    elif 2 <= gap <= 6:
        options += [f"on {weekday}", f"last {weekday}", f"{_NUMBER_WORDS[gap]} days ago"]
    return rng.choice(options)


def future_phrase(when: datetime, noted: date, rng: random.Random, with_time: bool = True) -> str:
    """How a note written on ``noted`` refers to a later ``when``."""
    gap = (when.date() - noted).days
    weekday = V.WEEKDAYS[when.weekday()]
    at = f" at {_clock(when.time(), rng)}" if with_time else ""
    options = [_abs_date(when.date(), rng) + at] * 3
    if gap == 1:
        options.append("tomorrow" + at)
    elif 2 <= gap <= 6:
        options.append(f"this coming {weekday}{at}")
    return rng.choice(options)


@dataclass
class Mem:
    content: str
    created: datetime
    user: str
    id: str = ""


@dataclass
class Person:
    first: str
    last: str
    gender: str
    kind: str  # student, parent, tutor
    user: str
    role: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    subjects: list[str] = field(default_factory=list)

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


@dataclass
class Fact:
    person: Person
    ftype: str
    templates: dict[str, list[str]]
    mem: Mem
    used: bool = False


@dataclass
class Question:
    text: str
    kind: str
    evidence: list[Mem]
    asked: datetime | None = None


@dataclass
class Family:
    user: str
    surname: str
    parents: list[Person]
    students: list[Person]
    sibling_done: bool = False


class _Centre:
    """Builds one centre's memories and questions."""

    def __init__(self, index: int, rng: random.Random, centre_name: str, town: str) -> None:
        self.index = index
        self.key = f"tc{index + 1:02d}"
        self.rng = rng
        self.centre_name = centre_name
        self.town = town
        self.start = datetime(2025, 1, 6) + timedelta(days=rng.randint(0, 240))
        self.mems: list[Mem] = []
        self.questions: list[Question] = []
        self.changes: list[dict[str, Any]] = []
        self.protected: list[Mem] = []
        self.codes: set[str] = set()
        self.busy: dict[str, list[date]] = {}
        self.used_events: set[tuple[str, int]] = set()
        self.assign_student_subj: set[tuple[str, str]] = set()
        self.assign_tutor_subj: set[tuple[str, str]] = set()
        self.plan_keys: set[tuple[str, str, str]] = set()
        self.pc_done: set[tuple[str, str]] = set()
        self.partnered: set[str] = set()
        self._people()
        self._facts()

    # ------------------------------------------------------------------ people and facts
    def _people(self) -> None:
        rng = self.rng
        female = rng.sample(V.FEMALE_NAMES, len(V.FEMALE_NAMES))
        male = rng.sample(V.MALE_NAMES, len(V.MALE_NAMES))
        surnames = rng.sample(V.SURNAMES, len(V.SURNAMES))

        def first(gender: str) -> str:
            return (female if gender == "f" else male).pop()

        hobbies = rng.sample(V.HOBBIES, len(V.HOBBIES))
        origins = rng.sample(V.ORIGIN_TOWNS, len(V.ORIGIN_TOWNS))
        backgrounds = rng.sample(V.TUTOR_BACKGROUNDS, len(V.TUTOR_BACKGROUNDS))
        self.tutors: list[Person] = []
        subjects = list(V.SUBJECTS)
        rng.shuffle(subjects)
        for i in range(TUTORS_PER_AGENT):
            g = rng.choice("fm")
            t = Person(first(g), surnames.pop(), g, "tutor", CENTRE_USER)
            t.subjects = [subjects[(2 * i) % len(subjects)], subjects[(2 * i + 1) % len(subjects)]]
            t.attrs["background"] = backgrounds.pop()
            t.attrs["dayoff"] = rng.choice(V.WEEKDAYS[:6])
            self.tutors.append(t)
        taught = sorted({s for t in self.tutors for s in t.subjects})
        self.families: list[Family] = []
        for f in range(FAMILIES_PER_AGENT):
            user = f"family-{f + 1:02d}"
            surname = surnames.pop()
            parents: list[Person] = []
            roles = ["f", "m"] if rng.random() < 0.45 else [rng.choice("fm")]
            for g in roles:
                role = rng.choice(V.PARENT_ROLES_FEMALE if g == "f" else V.PARENT_ROLES_MALE[:2])
                if g == "f" and rng.random() < 0.7:
                    role = "mum"
                if g == "m" and rng.random() < 0.7:
                    role = "dad"
                p = Person(first(g), surname, g, "parent", user, role=role)
                p.attrs["contact"] = rng.choice(V.CONTACTS)
                p.attrs["job"] = rng.choice(V.JOBS)
                parents.append(p)
            students: list[Person] = []
            for _ in range(2 if rng.random() < 0.4 else 1):
                g = rng.choice("fm")
                s = Person(first(g), surname, g, "student", user)
                s.subjects = rng.sample(taught, 3)
                s.attrs["year"] = str(rng.randint(5, 13))
                s.attrs["school"] = rng.choice(V.SCHOOLS)
                s.attrs["struggle"] = rng.choice(s.subjects)
                s.attrs["goal"] = rng.choice(V.GOALS)
                s.attrs["need"] = rng.choice(V.NEEDS)
                s.attrs["style"] = rng.choice(V.STYLES)
                if hobbies:
                    s.attrs["hobby"] = hobbies.pop()
                if origins and rng.random() < 0.6:
                    s.attrs["origin"] = origins.pop()
                students.append(s)
            self.families.append(Family(user, surname, parents, students))
        self.students = [s for fam in self.families for s in fam.students]
        self.parents = [p for fam in self.families for p in fam.parents]
        self.family_of = {id(p): fam for fam in self.families for p in fam.parents + fam.students}

    def _when(self, lo: float = 0.0, hi: float = 0.9) -> datetime:
        day = self.start + timedelta(days=self.rng.randint(int(SPAN_DAYS * lo), int(SPAN_DAYS * hi)))
        return day.replace(
            hour=self.rng.randint(8, 20), minute=self.rng.randint(0, 59), second=self.rng.randint(0, 59)
        )

    def _note(self, text: str, created: datetime, user: str) -> Mem:
        m = Mem(_tidy(text), created, user)
        self.mems.append(m)
        return m

    def _name(self, p: Person) -> str:
        return p.full if self.rng.random() < 0.3 else p.first

    def _fact(self, p: Person, ftype: str, templates: dict[str, list[str]]) -> Fact:
        value = p.attrs[ftype] if ftype != "subjects" else " and ".join(p.subjects)
        text = self.rng.choice(templates["memory"]).format(s=self._name(p), v=value, v_base=_base(value))
        return Fact(p, ftype, templates, Mem(_tidy(text), self._when(), p.user))

    def _facts(self) -> None:
        self.facts: list[Fact] = []
        for s in self.students:
            for ftype, tpl in V.STUDENT_FACTS.items():
                if ftype in s.attrs:
                    self.facts.append(self._fact(s, ftype, tpl))
        for p in self.parents:
            for ftype, tpl in V.PARENT_FACTS.items():
                self.facts.append(self._fact(p, ftype, tpl))
        for t in self.tutors:
            for ftype, tpl in V.TUTOR_FACTS.items():
                self.facts.append(self._fact(t, ftype, tpl))
        self.rng.shuffle(self.facts)

    def _free_fact(self, p: Person, exclude: tuple[str, ...] = ()) -> Fact | None:
        options = [f for f in self.facts if f.person is p and not f.used and f.ftype not in exclude]
        return self.rng.choice(options) if options else None

    def _use(self, fact: Fact) -> Mem:
        fact.used = True
        self.mems.append(fact.mem)
        return fact.mem

    # ------------------------------------------------------------------ questions
    def _ask(self, text: str, kind: str, evidence: list[Mem]) -> None:
        self.questions.append(Question(_cap(text), kind, evidence))

    def single_hop(self) -> bool:
        for fact in self.facts:
            if fact.used:
                continue
            best: list[str] = []
            best_shared = -1
            for tpl in fact.templates["single"]:
                q = tpl.format(who=fact.person.first)
                shared, _ = paraphrase_overlap(q, fact.mem.content)
                if shared > best_shared:
                    best, best_shared = [q], shared
                elif shared == best_shared:
                    best.append(q)
            if best_shared < 1:
                continue
            self._ask(self.rng.choice(best), "single-hop", [self._use(fact)])
            return True
        return False

    def paraphrase(self) -> bool:
        for fact in self.facts:
            if fact.used:
                continue
            options = [
                q
                for q in (t.format(who=fact.person.first) for t in fact.templates["paraphrase"])
                if within_paraphrase_cap(q, fact.mem.content)
            ]
            if options:
                self._ask(self.rng.choice(options), "paraphrase", [self._use(fact)])
                return True
        return False

    def _fact_question(self, fact: Fact, who: str) -> str:
        return self.rng.choice(fact.templates["single"] + fact.templates["paraphrase"]).format(who=who)

    def _assignment(self, s: Person, subj: str | None = None) -> tuple[Person, str, Mem] | None:
        subjects = [subj] if subj else self.rng.sample(s.subjects, len(s.subjects))
        for sj in subjects:
            if (s.first, sj) in self.assign_student_subj:
                continue
            tutors = [
                t for t in self.tutors if sj in t.subjects and (t.first, sj) not in self.assign_tutor_subj
            ]
            if not tutors:
                continue
            t = self.rng.choice(tutors)
            self.assign_student_subj.add((s.first, sj))
            self.assign_tutor_subj.add((t.first, sj))
            text = self.rng.choice(V.ASSIGNMENT_TEMPLATES).format(t=t.first, s=self._name(s), subj=sj)
            return t, sj, self._note(text, self._when(), s.user)
        return None

    def multi_hop(self) -> bool:
        rng = self.rng
        shapes = [
            "sibling",
            "parent_child",
            "child_parent",
            "student_tutor",
            "tutor_student",
            "partner",
            "origin",
            "hobby",
        ]
        return any(getattr(self, f"_mh_{shape}")() for shape in rng.sample(shapes, len(shapes)))

    def _mh_sibling(self) -> bool:
        fams = [f for f in self.families if len(f.students) == 2 and not f.sibling_done]
        self.rng.shuffle(fams)
        for fam in fams:
            a, b = self.rng.sample(fam.students, 2)
            target = self._free_fact(b)
            if target is None:
                continue
            fam.sibling_done = True
            rel = "sister" if b.gender == "f" else "brother"
            text = self.rng.choice(V.SIBLING_TEMPLATES).format(a=a.first, b=b.first, rel=rel)
            bridge = self._note(text, self._when(), fam.user)
            self._ask(
                self._fact_question(target, f"{a.first}'s {rel}"), "multi-hop", [bridge, self._use(target)]
            )
            return True
        return False

    def _parent_child_pairs(self) -> list[tuple[Person, Person, Family]]:
        done = self.pc_done
        pairs = [
            (p, c, fam)
            for fam in self.families
            for p in fam.parents
            for c in fam.students
            if (p.first, c.first) not in done
        ]
        self.rng.shuffle(pairs)
        return pairs

    def _pc_bridge(self, p: Person, c: Person, fam: Family) -> Mem:
        self.pc_done.add((p.first, c.first))
        text = self.rng.choice(V.PARENT_CHILD_TEMPLATES).format(p=p.first, c=c.first, role=p.role)
        return self._note(text, self._when(), fam.user)

    def _mh_parent_child(self) -> bool:
        for p, c, fam in self._parent_child_pairs():
            if p.role not in ("mum", "dad") or sum(1 for s in fam.students if s.gender == c.gender) != 1:
                continue
            target = self._free_fact(c)
            if target is None:
                continue
            child = "daughter" if c.gender == "f" else "son"
            bridge = self._pc_bridge(p, c, fam)
            self._ask(
                self._fact_question(target, f"{p.first}'s {child}"), "multi-hop", [bridge, self._use(target)]
            )
            return True
        return False

    def _mh_child_parent(self) -> bool:
        for p, c, fam in self._parent_child_pairs():
            target = self._free_fact(p)
            if target is None:
                continue
            bridge = self._pc_bridge(p, c, fam)
            self._ask(
                self._fact_question(target, f"{c.first}'s {p.role}"), "multi-hop", [bridge, self._use(target)]
            )
            return True
        return False

    def _mh_student_tutor(self) -> bool:
        for s in self.rng.sample(self.students, len(self.students)):
            found = self._assignment(s)
            if found is None:
                continue
            t, sj, bridge = found
            target = self._free_fact(t, exclude=("subjects",))
            if target is None:
                self.mems.remove(bridge)
                self.assign_student_subj.discard((s.first, sj))
                self.assign_tutor_subj.discard((t.first, sj))
                continue
            self._ask(
                self._fact_question(target, f"{s.first}'s {sj} tutor"),
                "multi-hop",
                [bridge, self._use(target)],
            )
            return True
        return False

    def _mh_tutor_student(self) -> bool:
        for s in self.rng.sample(self.students, len(self.students)):
            target = self._free_fact(s)
            if target is None:
                continue
            found = self._assignment(s)
            if found is None:
                continue
            t, sj, bridge = found
            self._ask(
                self._fact_question(target, f"{t.first}'s {sj} student"),
                "multi-hop",
                [bridge, self._use(target)],
            )
            return True
        return False

    def _mh_partner(self) -> bool:
        partnered = self.partnered
        free = [s for s in self.students if s.first not in partnered]
        self.rng.shuffle(free)
        for a in free:
            for b in free:
                if b is a or b.user == a.user:
                    continue
                target = self._free_fact(b)
                if target is None:
                    continue
                partnered.update({a.first, b.first})
                sj = self.rng.choice(a.subjects)
                text = self.rng.choice(V.PARTNER_TEMPLATES).format(a=a.first, b=b.first, subj=sj)
                bridge = self._note(text, self._when(), a.user)
                self._ask(
                    self._fact_question(target, f"{a.first}'s study partner"),
                    "multi-hop",
                    [bridge, self._use(target)],
                )
                return True
        return False

    def _mh_described(self, ftype: str, describe: str) -> bool:
        for fact in self.facts:
            if fact.used or fact.ftype != ftype:
                continue
            s = fact.person
            who = describe.format(v=s.attrs[ftype])
            if self.rng.random() < 0.3:
                found = self._assignment(s)
                if found is not None:
                    _, sj, second = found
                    q = self.rng.choice(V.TUTOR_OF_QUESTIONS).format(who=who, subj=sj)
                    self._ask(q, "multi-hop", [self._use(fact), second])
                    return True
            target = self._free_fact(s, exclude=("origin", "hobby"))
            if target is None:
                continue
            self._ask(self._fact_question(target, who), "multi-hop", [self._use(fact), self._use(target)])
            return True
        return False

    def _mh_origin(self) -> bool:
        return self._mh_described("origin", "the student who moved here from {v}")

    def _mh_hobby(self) -> bool:
        return self._mh_described("hobby", "the student who {v}")

    # ------------------------------------------------------------------ temporal
    def _free_dates(self, s: Person, dates: list[date]) -> bool:
        return all(abs((d - b).days) >= MIN_GAP_DAYS for d in dates for b in self.busy.get(s.first, []))

    def _reserve(self, s: Person, dates: list[date]) -> None:
        self.busy.setdefault(s.first, []).extend(dates)

    def _parent_name(self, s: Person) -> str:
        return self.rng.choice(self.family_of[id(s)].parents).first

    def temporal(self) -> bool:
        r = self.rng.random()
        order = (
            ["plan", "when", "window"]
            if r < 0.4
            else (["when", "window", "plan"] if r < 0.75 else ["window", "plan", "when"])
        )
        return any(getattr(self, f"_t_{k}")() for k in order)

    def _t_plan(self) -> bool:
        rng = self.rng
        for _ in range(40):
            s = rng.choice(self.students)
            sj = rng.choice(s.subjects)
            exam = int(s.attrs["year"]) >= 10 and rng.random() < 0.5
            if (s.first, sj, "exam" if exam else "session") in self.plan_keys:
                continue
            t0 = self._when(0.0, 0.75)
            lead = rng.randint(6, 21)
            if exam:
                s0 = datetime.combine(t0.date() + timedelta(days=lead), time(9, 0))
                if s0.weekday() >= 5:
                    s0 += timedelta(days=7 - s0.weekday())
            else:
                day = t0.date() + timedelta(days=lead)
                slot = (
                    time(rng.randint(9, 12), rng.choice([0, 30]))
                    if day.weekday() >= 5
                    else time(rng.randint(15, 18), rng.choice([0, 30]))
                )
                s0 = datetime.combine(day, slot)
            t1 = t0 + timedelta(
                days=rng.randint(1, max(1, (s0.date() - t0.date()).days - 2)), hours=rng.randint(0, 3)
            )
            relative = rng.random() < 0.45
            if relative:
                tpl, ddays, dhours = rng.choice(V.EXAM_CHANGE_RELATIVE if exam else V.SESSION_CHANGE_RELATIVE)
                s1 = s0 + timedelta(days=ddays, hours=dhours)
            else:
                shift = rng.choice([-3, -2, -1, 1, 2, 3, 4, 5, 7, 8, 9])
                s1 = s0 + timedelta(days=shift)
                if not exam and rng.random() < 0.5:
                    s1 = s1.replace(hour=max(9, min(19, s1.hour + rng.choice([-1, 1, 2]))))
                if not exam and s1.weekday() < 5 and s1.hour < 15:
                    s1 = s1.replace(hour=rng.randint(15, 18))  # weekday sessions are after school
                if exam and s1.weekday() >= 5:
                    s1 += timedelta(days=7 - s1.weekday())
            if s1.date() <= t1.date():
                continue
            dates = [t0.date(), t1.date(), s0.date(), s1.date()]
            if not self._free_dates(s, dates):
                continue
            self._reserve(s, dates)
            self.plan_keys.add((s.first, sj, "exam" if exam else "session"))
            p = self._parent_name(s)
            board = rng.choice(V.EXAM_BOARDS)
            fmt = dict(s=s.first, subj=sj, p=p, board=board)
            orig_tpls = V.EXAM_ORIGINAL if exam else V.SESSION_ORIGINAL
            original = self._note(
                rng.choice(orig_tpls).format(when=future_phrase(s0, t0.date(), rng, not exam), **fmt),
                t0,
                s.user,
            )
            if relative:
                change_text = tpl.format(**fmt)
            else:
                abs_tpls = V.EXAM_CHANGE_ABSOLUTE if exam else V.SESSION_CHANGE_ABSOLUTE
                change_text = rng.choice(abs_tpls).format(
                    when=future_phrase(s1, t1.date(), rng, not exam), **fmt
                )
            change = self._note(change_text, t1, s.user)
            what = f"{'mock exam' if exam else 'session'} {s0.isoformat(' ', 'minutes')} -> {s1.isoformat(' ', 'minutes')}"
            self.changes.append({"agent": self.key, "original": original, "change": change, "what": what})
            ask_original = rng.random() < 0.3
            if ask_original:
                q = rng.choice(V.EXAM_QUESTIONS_ORIGINAL if exam else V.SESSION_QUESTIONS_ORIGINAL)
                self._ask(q.format(**fmt), "temporal", [original, change])
            else:
                q = rng.choice(V.EXAM_QUESTIONS_NOW if exam else V.SESSION_QUESTIONS_NOW)
                self._ask(q.format(**fmt), "temporal", [original, change] if relative else [change])
                if not relative:
                    self.protected.append(original)
            return True
        return False

    def _event_note(self, s: Person, ev: int, day: date) -> Mem:
        rng = self.rng
        noted = day + timedelta(days=rng.choice([0, 0, 1, 1, 2, 3, 4, 5, 6, 8]))
        created = datetime.combine(noted, time(rng.randint(17, 21), rng.randint(0, 59), rng.randint(0, 59)))
        past, _, _ = V.EVENTS[ev]
        when = past_phrase(day, noted, rng)
        text = rng.choice(V.EVENT_MEMORY).format(
            s=s.first, past=past, when=when, When=_cap(when), p=self._parent_name(s)
        )
        self.used_events.add((s.first, ev))
        return self._note(text, created, s.user)

    def _free_event(self, s: Person) -> int | None:
        options = [i for i in range(len(V.EVENTS)) if (s.first, i) not in self.used_events]
        return self.rng.choice(options) if options else None

    def _t_when(self) -> bool:
        for _ in range(40):
            s = self.rng.choice(self.students)
            ev = self._free_event(s)
            day = self._when(0.0, 0.9).date()
            if ev is None or not self._free_dates(s, [day, day + timedelta(days=8)]):
                continue
            self._reserve(s, [day, day + timedelta(days=8)])
            mem = self._event_note(s, ev, day)
            q = self.rng.choice(V.EVENT_WHEN_QUESTIONS).format(s=s.first, base=V.EVENTS[ev][1])
            self._ask(q, "temporal", [mem])
            return True
        return False

    def _t_window(self) -> bool:
        rng = self.rng
        for _ in range(40):
            s = rng.choice(self.students)
            anchor_ev = self._free_event(s)
            if anchor_ev is None:
                continue
            self.used_events.add((s.first, anchor_ev))
            target_ev = self._free_event(s)
            self.used_events.discard((s.first, anchor_ev))
            if target_ev is None:
                continue
            anchor_day = self._when(0.05, 0.85).date()
            after = rng.random() < 0.6
            offset = rng.randint(2, 6)
            target_day = anchor_day + timedelta(days=offset if after else -offset)
            dates = [anchor_day, target_day, anchor_day + timedelta(days=8), target_day + timedelta(days=8)]
            if not self._free_dates(s, dates):
                continue
            self._reserve(s, dates)
            anchor = self._event_note(s, anchor_ev, anchor_day)
            target = self._event_note(s, target_ev, target_day)
            tpls = V.EVENT_AFTER_QUESTIONS if after else V.EVENT_BEFORE_QUESTIONS
            q = rng.choice(tpls).format(s=s.first, np=V.EVENTS[anchor_ev][2])
            self._ask(q, "temporal", [anchor, target])
            return True
        return False

    # ------------------------------------------------------------------ identifiers
    def _code(self, kind: str) -> str:
        rng = self.rng
        letters, digits = "ABCDEFGHJKLMNPQRSTUVWXYZ", "23456789"  # no I, O, 0 or 1 to confuse
        while True:
            if kind == "invoice":
                code = rng.choice(
                    [
                        f"INV-{rng.randint(1000, 9999)}-{''.join(rng.choices(letters, k=2))}",
                        f"TC{rng.randint(10, 99)}{''.join(rng.choices(letters, k=1))}{rng.randint(100, 999)}",
                    ]
                )
            elif kind == "booking":
                body = rng.choices(letters, k=3) + rng.choices(digits, k=2)
                rng.shuffle(body)
                code = "BK-" + "".join(body)
            elif kind == "room":
                code = rng.choice(
                    [
                        f"{rng.choice('ABCDEFG')}{rng.randint(1, 3)}{rng.randint(0, 9)}",
                        f"{rng.randint(1, 3)}{rng.choice('ABCDEF')}-{rng.randint(2, 29):02d}",
                    ]
                )
            elif kind == "voucher":
                word = rng.choice(["SPRING", "WELCOME", "FRIEND", "SUMMER", "AUTUMN", "REFER", "SIBLING"])
                code = f"{word}{rng.randint(10, 99)}{rng.choice(letters)}"
            else:
                code = f"{''.join(rng.choices(letters, k=2))}-{rng.randint(10, 99)}{rng.choice(letters)}"
            if code not in self.codes:
                self.codes.add(code)
                return code

    def identifier(self) -> bool:
        rng = self.rng
        kind = rng.choice(["invoice", "invoice", "booking", "booking", "room", "voucher", "loan"])
        code = self._code(kind)
        s = rng.choice(self.students)
        p = self._parent_name(s)
        sj = rng.choice(s.subjects)
        created = self._when()
        if kind == "room":
            t = rng.choice(self.tutors)
            day = rng.choice([d for d in V.WEEKDAYS[:6] if d != t.attrs["dayoff"]])
            text = rng.choice(V.ROOM_TEMPLATES).format(t=t.first, day=day, subj=t.subjects[0], code=code)
            mem = self._note(text, created, CENTRE_USER)
            q = rng.choice(V.ROOM_QUESTIONS)
        else:
            amt = f"£{rng.randint(10, 50)}" if kind == "voucher" else f"£{rng.randrange(120, 600, 5)}"
            tpls = {
                "invoice": V.INVOICE_TEMPLATES,
                "booking": V.BOOKING_TEMPLATES,
                "voucher": V.VOUCHER_TEMPLATES,
                "loan": V.LOAN_TEMPLATES,
            }[kind]
            text = rng.choice(tpls).format(p=p, s=self._name(s), subj=sj, code=code, amt=amt)
            mem = self._note(text, created, s.user)
            q = rng.choice(
                {
                    "invoice": V.INVOICE_QUESTIONS,
                    "booking": V.BOOKING_QUESTIONS,
                    "voucher": V.VOUCHER_QUESTIONS,
                    "loan": V.LOAN_QUESTIONS,
                }[kind]
            )
        self._ask(q.format(code=code), "identifier", [mem])
        return True

    # ------------------------------------------------------------------ assembly
    def build(self) -> dict[str, Any]:
        rng = self.rng
        n_questions = rng.randint(*QUESTIONS_PER_AGENT)
        counts = _split(n_questions, SHARES)
        makers = {
            "multi-hop": self.multi_hop,
            "temporal": self.temporal,
            "identifier": self.identifier,
            "paraphrase": self.paraphrase,
            "single-hop": self.single_hop,
        }
        for kind, maker in makers.items():
            for _ in range(counts[kind]):
                if not maker():
                    raise RuntimeError(f"{self.key}: ran out of material for {kind}")
        evidence = {id(m) for q in self.questions for m in q.evidence}
        unanswered = [m for m in self.mems if id(m) not in evidence]
        share = rng.uniform(*UNANSWERED_SHARE)
        total = min(round(len(evidence) / (1 - share)), MEMORIES_PER_AGENT[1])
        n_chatter = total - len(evidence) - len(unanswered)
        if n_chatter < 0 or not 0.20 <= 1 - len(evidence) / total <= 0.25 or total < MEMORIES_PER_AGENT[0]:
            raise RuntimeError(f"{self.key}: the unanswered share or the size is out of bounds")
        centre_lines: list[str] = []
        parent_lines: list[str] = []
        for _ in range(n_chatter):
            if rng.random() < 0.35:
                centre_lines = centre_lines or rng.sample(V.CHATTER_CENTRE, len(V.CHATTER_CENTRE))
                self._note(centre_lines.pop(), self._when(0.0, 1.0), CENTRE_USER)
            else:
                parent_lines = parent_lines or rng.sample(V.CHATTER_PARENT, len(V.CHATTER_PARENT))
                p = rng.choice(self.parents)
                self._note(parent_lines.pop().format(p=p.first), self._when(0.0, 1.0), p.user)
        self.mems.sort(key=lambda m: m.created)
        for i, m in enumerate(self.mems):
            m.id = f"{self.key}-m{i + 1:04d}"
        rng.shuffle(self.questions)
        out_q = []
        for i, q in enumerate(self.questions):
            latest = max(m.created for m in q.evidence)
            asked = latest + timedelta(hours=rng.randint(2, 24 * 21), minutes=rng.randint(0, 59))
            out_q.append(
                {
                    "id": f"{self.key}-q{i + 1:03d}",
                    "text": q.text,
                    "kind": q.kind,
                    "evidence": [m.id for m in q.evidence],
                    "asked_at": _iso(asked),
                }
            )
        for c in self.changes:
            c["original"] = c["original"].id
            c["change"] = c["change"].id
        return {
            "key": self.key,
            "memories": [
                {"id": m.id, "content": m.content, "created_at": _iso(m.created), "user": m.user}
                for m in self.mems
            ],
            "questions": out_q,
        }


def _split(n: int, shares: dict[str, float]) -> dict[str, int]:
    raw = {k: n * v for k, v in shares.items()}
    counts = {k: int(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: raw[k] - counts[k], reverse=True)[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


def generate_with_changes(seed: int = 0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The set, and the plan-change pairs (original memory id, change memory id, what changed)."""
    master = random.Random(seed)
    n_agents = master.randint(*AGENTS)
    names = master.sample(V.CENTRE_NAMES, n_agents)
    towns = master.sample(V.CENTRE_TOWNS, n_agents)
    agents = []
    changes: list[dict[str, Any]] = []
    for i in range(n_agents):
        centre = _Centre(i, random.Random(master.getrandbits(64)), names[i], towns[i])
        agents.append(centre.build())
        changes.extend(centre.changes)
    return {"name": NAME, "agents": agents}, changes


def generate(seed: int = 0) -> dict[str, Any]:
    """The tutoring-centre memory set for ``seed``."""
    return generate_with_changes(seed)[0]


def stats(data: dict[str, Any]) -> dict[str, Any]:
    """Counts per kind and per agent, totals, and the share of memories no question cites."""
    per_kind: dict[str, int] = {k: 0 for k in SHARES}
    per_agent = {}
    n_mem = n_q = n_unanswered = 0
    for agent in data["agents"]:
        cited = {e for q in agent["questions"] for e in q["evidence"]}
        unanswered = sum(1 for m in agent["memories"] if m["id"] not in cited)
        for q in agent["questions"]:
            per_kind[q["kind"]] = per_kind.get(q["kind"], 0) + 1
        per_agent[agent["key"]] = {
            "memories": len(agent["memories"]),
            "questions": len(agent["questions"]),
            "unanswered_share": round(unanswered / len(agent["memories"]), 4),
        }
        n_mem += len(agent["memories"])
        n_q += len(agent["questions"])
        n_unanswered += unanswered
    return {
        "name": data["name"],
        "agents": len(data["agents"]),
        "memories": n_mem,
        "questions": n_q,
        "per_kind": per_kind,
        "kind_shares": {k: round(v / n_q, 4) for k, v in per_kind.items()} if n_q else {},
        "unanswered_share": round(n_unanswered / n_mem, 4) if n_mem else 0.0,
        "per_agent": per_agent,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Statistics of the tutoring-centre conversational memory set."
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(json.dumps(stats(generate(args.seed)), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
