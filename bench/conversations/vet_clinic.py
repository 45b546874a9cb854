"""The vet_clinic conversational memory set: front-desk notes of small veterinary practices.

Each agent is the front-desk assistant of one practice and keeps about six months of short, dated,
third-person notes on 3-6 clients and their animals. Facts change (weights, diets, doses, bookings,
preferred vets, contact preferences, payment plans); the earlier note stays and a question about the
current state cites only the later one, which ``changes`` records. Standard library only, deterministic
per seed: ``python -m bench.conversations.vet_clinic --seed 0 --stats``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta

from bench.conversations import vet_clinic_vocab as V

NAME = "vet_clinic"
SHARES = {"single-hop": 0.24, "paraphrase": 0.18, "multi-hop": 0.18, "temporal": 0.22, "identifier": 0.18}

PARAPHRASE_LIMIT = 0.34  # the rule: at most this share of a paraphrase's content words in its evidence
_PARAPHRASE_MARGIN = 0.30  # what the generator allows itself under its most pessimistic count

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]  # fmt: skip
SPAN_DAYS = 182

# ---------------------------------------------------------------------------------------------------------
# Word overlap (the paraphrase rule)

_STOP_SMALL = set(
    """a an the and or but if of to in on at by for with from as is are was were be been being am do does did
    has have had having it its this that these those i you he she we they me him her us them my your his our
    their what which who whom whose when where why how not no so than then there here into onto out up""".split()
)
_STOP_LARGE = _STOP_SMALL | set(
    """any all can could would should will shall may might must just also about after before over under
    again once more most much many some such only own same too very s t now still get got one each every
    other others per while during currently these since back""".split()
)


def _stem(word: str) -> str:
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s", "e", "y"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                word += "i"
            break
    return word


def content_words(text: str, stop: set[str] = _STOP_SMALL) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower().replace("'s ", " ")) if w not in stop]


def paraphrase_overlap(question: str, evidence: list[str]) -> float:
    """The share of the question's content words found in the evidence, counted pessimistically: a word
    counts as found if its stem or its first five letters match a word of the evidence, under either of
    two stop-word lists; the larger share is returned."""
    worst = 0.0
    for stop in (_STOP_SMALL, _STOP_LARGE):
        ev_words = [w for text in evidence for w in content_words(text, stop)]
        ev_keys = {_stem(w) for w in ev_words} | {w[:5] for w in ev_words if len(w) >= 5} | set(ev_words)
        q_words = content_words(question, stop)
        if not q_words:
            return 1.0
        hit = sum(
            1 for w in q_words if w in ev_keys or _stem(w) in ev_keys or (len(w) >= 5 and w[:5] in ev_keys)
        )
        worst = max(worst, hit / len(q_words))
    return worst


# ---------------------------------------------------------------------------------------------------------
# Dates


def _suffix(d: int) -> str:
    if 11 <= d % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")


def fmt_content_date(d: date, ref: date, rng: random.Random) -> str:
    """A date as a receptionist writes it in a note made on ``ref``."""
    delta = (d - ref).days
    opts = [
        f"on {WEEKDAYS[d.weekday()]} {d.day} {MONTHS[d.month - 1]}",
        f"on {d.day}/{d.month}",
        f"on {MONTHS[d.month - 1]} {d.day}{_suffix(d.day)}",
        f"on {d.day} {MONTHS[d.month - 1][:3]}",
        f"for {WEEKDAYS[d.weekday()][:3]} {d.day}/{d.month}",
    ]
    if delta == 1:
        opts += ["tomorrow", "tomorrow"]
    elif 2 <= delta <= 6 and d.weekday() > ref.weekday():
        opts += [f"this {WEEKDAYS[d.weekday()]}", f"on {WEEKDAYS[d.weekday()]}"]
    elif (d - timedelta(days=d.weekday())) - (ref - timedelta(days=ref.weekday())) == timedelta(days=7):
        opts += [f"next {WEEKDAYS[d.weekday()]}", f"next {WEEKDAYS[d.weekday()]}"]
    if 0 < delta <= 20 and d.month == ref.month:
        opts.append(f"on the {d.day}{_suffix(d.day)}")
    return rng.choice(opts)


def fmt_question_date(d: date, rng: random.Random) -> str:
    return rng.choice(
        [
            f"{d.day} {MONTHS[d.month - 1]}",
            f"{MONTHS[d.month - 1]} {d.day}{_suffix(d.day)}",
            f"{WEEKDAYS[d.weekday()]} {d.day} {MONTHS[d.month - 1]}",
        ]
    )


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


# ---------------------------------------------------------------------------------------------------------
# One practice


class _Practice:
    def __init__(self, rng: random.Random, key: str, start: date, n_mem: int, codes: set[str]):
        self.rng = rng
        self.key = key
        self.start = start
        self.end = start + timedelta(days=SPAN_DAYS - 1)
        self.n_mem = n_mem
        self.codes = codes
        self.events: list[dict] = []
        self._make_world()

    # -- helpers -----------------------------------------------------------------------------------------
    def dt(self, day: int) -> datetime:
        day = max(0, min(SPAN_DAYS - 1, day))
        d = self.start + timedelta(days=day)
        if d.weekday() == 6:  # closed on Sundays
            d += timedelta(days=1) if day < SPAN_DAYS - 1 else timedelta(days=-1)
        hour = self.rng.randint(8, 17) if d.weekday() < 5 else self.rng.randint(9, 11)
        return datetime(d.year, d.month, d.day, hour, self.rng.randrange(0, 60, 1), self.rng.randrange(60))

    def day_of(self, dt: datetime) -> int:
        return (dt.date() - self.start).days

    def code(self, prefix: str, digits: int) -> str:
        while True:
            c = prefix + "".join(self.rng.choice("0123456789") for _ in range(digits))
            if c not in self.codes:
                self.codes.add(c)
                return c

    def add(self, dt: datetime, owner: dict, content: str, type_: str, pet: dict | None = None, **kw) -> dict:
        ev = {
            "dt": dt,
            "user": owner["key"],
            "content": content,
            "type": type_,
            "owner": owner,
            "pet": pet,
            **kw,
        }
        self.events.append(ev)
        return ev

    def who(self, owner: dict, pet: dict) -> str:
        r = self.rng.random()
        if r < 0.4:
            return pet["name"]
        if r < 0.75:
            return f"{owner['name']}'s {pet['name']}"
        return pet["name"]

    # -- the world ---------------------------------------------------------------------------------------
    def _make_world(self) -> None:
        rng = self.rng
        n_owners = max(3, min(6, round(self.n_mem / 58 + rng.uniform(-0.6, 0.6))))
        names = rng.sample(V.OWNERS, n_owners)
        self.vets = rng.sample(V.VETS, rng.randint(3, 4))
        self.rotas = dict(zip(self.vets, rng.sample(V.ROTAS, len(self.vets)), strict=True))
        species_breeds = {sp: rng.sample(b, min(len(b), rng.randint(2, 3))) for sp, b in V.BREEDS.items()}
        pet_pool = [p for p in dict.fromkeys(V.PET_NAMES) if p not in names]
        rng.shuffle(pet_pool)
        taken = set(names)
        self.owners = []
        for i, name in enumerate(names):
            owner = {"name": name, "key": name.lower(), "pets": [], "idx": i}
            n_pets = rng.choices([1, 2, 3], weights=[0.3, 0.45, 0.25])[0]
            for _ in range(n_pets):
                pname = pet_pool.pop()
                taken.add(pname)
                sp = rng.choices(list(V.SPECIES_WEIGHTS), weights=list(V.SPECIES_WEIGHTS.values()))[0]
                lo, hi = V.WEIGHT_RANGE[sp]
                owner["pets"].append(
                    {
                        "name": pname,
                        "species": sp,
                        "breed": rng.choice(species_breeds[sp]),
                        "age": rng.randint(1, 13) if sp in ("dog", "cat") else rng.randint(1, 6),
                        "weight": round(rng.uniform(lo, hi), 1),
                    }
                )
            self.owners.append(owner)
        hh_pool = [h for h in V.HOUSEHOLD_NAMES if h not in taken and h not in V.PET_NAMES]
        rng.shuffle(hh_pool)
        self.hh_pool = hh_pool

        for owner in self.owners:
            for pet in owner["pets"]:
                self._pet_events(owner, pet)
            self._owner_events(owner)
        for vet in self.vets:
            owner = rng.choice(self.owners)
            told = rng.choice(
                [
                    f"Told {owner['name']} that {vet} works {self.rotas[vet]} these days.",
                    f"{owner['name']} asked when {vet} is in: {self.rotas[vet]}.",
                    f"Let {owner['name']} know {vet} is now on {self.rotas[vet]}.",
                ]
            )
            self.add(self.dt(rng.randint(5, 120)), owner, told, "rota", vet=vet)
        self._fit_size()

    def _pet_events(self, owner: dict, pet: dict) -> None:
        rng = self.rng
        o, p, sp = owner["name"], pet["name"], pet["species"]
        reg_day = pet["reg_day"] = rng.randint(0, 20)
        reg = rng.choice(
            [
                f"New client {o} registered {p}, a {pet['age']}-year-old {pet['breed']} {sp}.",
                f"{o} signed up {p} today: {sp}, {pet['breed']}, aged {pet['age']}.",
                f"Registered {o}'s {sp} {p} ({pet['breed']}, {pet['age']} years old) with the practice.",
                f"{o} came in to register {p}, {pet['age']} years, {pet['breed']} {sp}; forms all done.",
            ]
        )
        self.add(self.dt(reg_day), owner, reg, "register", pet)
        after = reg_day + 1
        # microchip
        chip = self.code("FDX" + rng.choice(["985", "941", "900"]), 9)
        self.add(
            self.dt(rng.randint(after, after + 30)),
            owner,
            rng.choice(
                [
                    f"Microchip for {p} scanned and logged: {chip}.",
                    f"{o} gave {p}'s chip number, {chip}, updated on the system.",
                    f"Chip {chip} read fine on {p} today, details match.",
                ]
            ),
            "chip",
            pet,
            code=chip,
        )
        # insurance
        if rng.random() < 0.75:
            insurer = rng.choice(list(V.INSURERS))
            pol = self.code(V.INSURERS[insurer], 8)
            pet["insurer"] = insurer
            self.add(
                self.dt(rng.randint(after, after + 60)),
                owner,
                rng.choice(
                    [
                        f"{o} sent {p}'s insurance details: {insurer}, policy {pol}.",
                        f"{p} is insured with {insurer}, policy number {pol}.",
                        f"Insurance on file for {p} now: {insurer} {pol}, claim forms go direct.",
                    ]
                ),
                "policy",
                pet,
                code=pol,
                insurer=insurer,
            )
        # allergy
        if rng.random() < 0.65:
            allergen = rng.choice(V.ALLERGENS)
            self.add(
                self.dt(rng.randint(after, 150)),
                owner,
                rng.choice(
                    [
                        f"{p} is allergic to {allergen}, flagged on the file.",
                        f"{o} says {p} reacts badly to {allergen}; added an alert.",
                        f"Allergy alert added for {p}: {allergen}.",
                    ]
                ),
                "allergy",
                pet,
                allergen=allergen,
            )
        # weights
        days = sorted(rng.sample(range(after, SPAN_DAYS - 3), rng.randint(3, 5)))
        for d in days:
            self._weight(owner, pet, d)
        # diet
        diets = rng.sample(V.DIETS[sp], min(len(V.DIETS[sp]), rng.randint(1, 3)))
        ddays = sorted(rng.sample(range(after, SPAN_DAYS - 5), len(diets)))
        for i, (d, diet) in enumerate(zip(ddays, diets, strict=True)):
            amount = rng.choice(V.DIET_AMOUNTS)
            if i == 0:
                text = rng.choice(
                    [
                        f"{p} is fed {diet}, {amount}.",
                        f"{o} says {p} eats {diet}, {amount}.",
                        f"Diet noted for {p}: {diet}, {amount}.",
                    ]
                )
            else:
                text = rng.choice(
                    [
                        f"{o} has switched {p} to {diet}, {amount}.",
                        f"{p} is now on {diet} instead, {amount}.",
                        f"Diet change for {self.who(owner, pet)}: {diet}, {amount}.",
                    ]
                )
            self.add(self.dt(d), owner, text, "diet", pet, slot=("diet", p), value=diet)
        # vaccinations
        for vac in rng.sample(V.VACCINES[sp], min(len(V.VACCINES[sp]), rng.choice([1, 1, 2]))):
            d = rng.randint(after, SPAN_DAYS - 2)
            self.add(
                self.dt(d),
                owner,
                rng.choice(
                    [
                        f"{p} had the {vac} today, no reaction.",
                        f"Gave {self.who(owner, pet)} the {vac}; next one due in a year.",
                        f"{vac} done for {p}, card stamped.",
                    ]
                ),
                "vacc",
                pet,
                vaccine=vac,
            )
        if V.VACCINES[sp]:
            vac = rng.choice(V.VACCINES[sp])
            d = rng.randint(after, SPAN_DAYS - 20)
            ref = self.dt(d)
            due = ref.date() + timedelta(days=rng.randint(10, 70))
            self.add(
                ref,
                owner,
                rng.choice(
                    [
                        f"Reminder: {p}'s {vac} is due {fmt_content_date(due, ref.date(), rng)}.",
                        f"Told {o} that {p} needs the {vac} {fmt_content_date(due, ref.date(), rng)}.",
                    ]
                ),
                "due",
                pet,
                vaccine=vac,
                due=due,
            )
        # medication
        drugs = [d for d, info in V.DRUGS.items() if sp in info[1]]
        for drug in rng.sample(drugs, rng.choice([0, 1, 1, 2])):
            doses = rng.sample(V.DRUGS[drug][2], min(len(V.DRUGS[drug][2]), rng.randint(1, 3)))
            mdays = sorted(rng.sample(range(after, SPAN_DAYS - 3), len(doses)))
            vet = rng.choice(self.vets)
            for i, (d, dose) in enumerate(zip(mdays, doses, strict=True)):
                if i == 0:
                    text = rng.choice(
                        [
                            f"{vet} started {p} on {drug} {dose}.",
                            f"{p} begins {drug}, {dose}, per {vet}.",
                            f"{o} collected {drug} for {p}: {dose}.",
                        ]
                    )
                else:
                    text = rng.choice(
                        [
                            f"{p}'s {drug} changed to {dose} from today.",
                            f"{vet} has altered {p}'s {drug}: now {dose}.",
                            f"{o} told {drug} for {p} is now {dose}, new label printed.",
                        ]
                    )
                self.add(
                    self.dt(d), owner, text, "med", pet, slot=("med", p, drug), value=dose, drug=drug, ver=i
                )
        # appointments
        for purpose in rng.sample(V.APPOINTMENTS, rng.randint(2, 4)):
            self._appointment(owner, pet, purpose, rng.randint(after, SPAN_DAYS - 12))
        # operation
        if rng.random() < 0.5:
            op = rng.choice(V.OPERATIONS[sp])
            vet = rng.choice(self.vets)
            d = rng.randint(after + 5, SPAN_DAYS - 20)
            self.add(
                self.dt(d),
                owner,
                rng.choice(
                    [
                        f"{p} had the {op} with {vet} this morning; {o} to collect at four.",
                        f"{vet} did {p}'s {op} today, went smoothly.",
                        f"{op.capitalize()} done on {p} today by {vet}, waking up nicely.",
                    ]
                ),
                "op",
                pet,
                op=op,
                vet=vet,
            )
            rd = d + rng.randint(3, 14)
            state = rng.choice(["wound healed nicely", "a little swelling, otherwise fine", "eating well again",
                                "licking the site, cone back on", "bright and back to normal"])  # fmt: skip
            self.add(
                self.dt(rd),
                owner,
                rng.choice(
                    [
                        f"Post-op check for {p}: {state}.",
                        f"{o} reports {p} after the {op}: {state}.",
                    ]
                ),
                "recovery",
                pet,
                op=op,
                state=state,
            )
        # boarding
        if rng.random() < 0.4:
            d = rng.randint(after, SPAN_DAYS - 30)
            ref = self.dt(d)
            start = ref.date() + timedelta(days=rng.randint(5, 30))
            nights = rng.randint(2, 14)
            ref_code = self.code("BRD", 5)
            self.add(
                ref,
                owner,
                rng.choice(
                    [
                        f"{p} booked into boarding {fmt_content_date(start, ref.date(), rng)} for {nights} nights while {o} is {rng.choice(V.AWAY)}, ref {ref_code}.",
                        f"Boarding ref {ref_code}: {p}, {nights} nights from {start.day}/{start.month}, {o} {rng.choice(V.AWAY)}.",
                    ]
                ),
                "boarding",
                pet,
                code=ref_code,
                start_date=start,
                nights=nights,
            )
        # lab work
        for test in rng.sample(list(V.LAB_TESTS), rng.choice([0, 1, 1, 2])):
            result = rng.choice(V.LAB_TESTS[test])
            lab = self.code("LAB", 6)
            self.add(
                self.dt(rng.randint(after, SPAN_DAYS - 2)),
                owner,
                rng.choice(
                    [
                        f"{test.capitalize()} results back for {p} (ref {lab}): {result}.",
                        f"Lab ref {lab}, {p}'s {test}: {result}. {o} informed.",
                    ]
                ),
                "lab",
                pet,
                code=lab,
                test=test,
                result=result,
            )

    def _weight(self, owner: dict, pet: dict, day: int) -> dict:
        # the value and the text are filled in by _render_weights once the notes are in time order
        return self.add(
            self.dt(day), owner, "", "weight", pet, slot=("weight", pet["name"]),
            tpl=self.rng.randrange(5), step=self.rng.uniform(-0.06, 0.06),
        )  # fmt: skip

    def _render_weights(self) -> None:
        for owner in self.owners:
            for pet in owner["pets"]:
                lo, hi = V.WEIGHT_RANGE[pet["species"]]
                for e in (e for e in self.events if e["type"] == "weight" and e["pet"] is pet):
                    old = pet["weight"]
                    w = round(min(hi, max(lo, old + (hi - lo) * e["step"])), 1)
                    if w == old:
                        w = round(old + 0.1, 1)
                    pet["weight"] = w
                    p, o = pet["name"], owner["name"]
                    trend = "up a bit" if w > old else "down slightly"
                    e["value"] = f"{w} kg"
                    e["content"] = [
                        f"{p} weighed in at {w} kg today.",
                        f"Weight check for {p}: {w} kg.",
                        f"{o} brought {p} for a weigh-in, {w} kg, {trend}.",
                        f"{p} is {w} kg now, {trend} on last time.",
                        f"Scales say {w} kg for {o}'s {p}.",
                    ][e["tpl"]]

    def _appointment(self, owner: dict, pet: dict, purpose: str, day: int) -> None:
        rng = self.rng
        p, o = pet["name"], owner["name"]
        vet = rng.choice(self.vets)
        ref = self.dt(day)
        when = ref.date() + timedelta(days=rng.randint(3, 25))
        if when.weekday() == 6:
            when += timedelta(days=1)
        hour = f"{rng.choice([9, 10, 11, 2, 3, 4])}:{rng.choice(['00', '15', '30', '45'])}"
        text = rng.choice(
            [
                f"Booked {p} in with {vet} for {_a(purpose)} {fmt_content_date(when, ref.date(), rng)} at {hour}.",
                f"{o} booked {_a(purpose)} for {p} {fmt_content_date(when, ref.date(), rng)}, {hour}, with {vet}.",
                f"{p}: {purpose} with {vet} {fmt_content_date(when, ref.date(), rng)} at {hour}.",
            ]
        )
        slot = ("appt", p, purpose)
        self.add(
            ref, owner, text, "book", pet, slot=slot, value=when, purpose=purpose, vet=vet, when=when, ver=0
        )
        r = rng.random()
        span = (when - ref.date()).days
        if r < 0.4 and span >= 3:
            mref = self.dt(day + rng.randint(1, span - 1))
            if mref.date() >= when:
                return
            new = when + timedelta(days=rng.choice([-2, -1, 1, 2, 3, 5, 7, 8, 14]))
            if new.weekday() == 6:
                new += timedelta(days=1)
            if new <= mref.date() or new == when:
                return
            text = rng.choice(
                [
                    f"{o} moved {p}'s {purpose} to {fmt_content_date(new, mref.date(), rng).removeprefix('on ').removeprefix('for ')}.",
                    f"{p}'s {purpose} rearranged, now {fmt_content_date(new, mref.date(), rng)}, same time.",
                    f"{o} rang: can't make the {purpose}, moved {p} to {fmt_content_date(new, mref.date(), rng).removeprefix('on ').removeprefix('for ')}.",
                ]
            )
            self.add(
                mref,
                owner,
                text,
                "move",
                pet,
                slot=slot,
                value=new,
                purpose=purpose,
                vet=vet,
                when=new,
                ver=1,
            )
        elif r < 0.5 and span >= 3:
            cref = self.dt(day + rng.randint(1, span - 1))
            if cref.date() >= when:
                return
            text = rng.choice(
                [
                    f"{o} cancelled {p}'s {purpose}; will rebook later.",
                    f"{p}'s {purpose} cancelled at {o}'s request.",
                ]
            )
            self.add(
                cref,
                owner,
                text,
                "cancel",
                pet,
                slot=slot,
                value=None,
                purpose=purpose,
                vet=vet,
                when=None,
                ver=1,
            )

    def _owner_events(self, owner: dict) -> None:
        rng = self.rng
        o = owner["name"]
        # preferred vet
        prefs = rng.sample(self.vets, 2 if rng.random() < 0.4 else 1)
        pdays = sorted(rng.sample(range(1, SPAN_DAYS - 5), len(prefs)))
        for i, (d, vet) in enumerate(zip(pdays, prefs, strict=True)):
            if i == 0:
                text = rng.choice(
                    [f"{o} prefers to see {vet} where possible.", f"{o} asked to be booked with {vet} by default.",
                     f"Preferred vet for {o}: {vet}."]
                )  # fmt: skip
            else:
                text = rng.choice(
                    [f"{o} now asks for {vet} instead of {prefs[i - 1]}.",
                     f"{o} has switched preferred vet to {vet}."]
                )  # fmt: skip
            self.add(self.dt(d), owner, text, "pref", slot=("pref", o), value=vet, vet=vet)
        # household members
        if rng.random() < 0.75:
            for pet in rng.sample(owner["pets"], min(len(owner["pets"]), rng.randint(1, 2))):
                if not self.hh_pool:
                    break
                m = self.hh_pool.pop()
                rel = rng.choice(V.RELATIONS["f" if m in V.FEMALE_HOUSEHOLD else "m"])
                text = rng.choice(
                    [
                        f"{o}'s {rel} {m} is allowed to bring {pet['name']} in.",
                        f"Added {m} ({o}'s {rel}) as able to bring {pet['name']} to appointments.",
                        f"{m}, {o}'s {rel}, will be dropping {pet['name']} off from now on.",
                    ]
                )
                day = rng.randint(pet["reg_day"] + 1, SPAN_DAYS - 10)
                self.add(self.dt(day), owner, text, "household", pet, member=m, rel=rel)
        # contact preference
        phone = f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}"
        email = f"{o.lower()}.{rng.choice(['h', 'k', 'm', 'b', 'w'])}{rng.randint(1, 99)}@{rng.choice(V.EMAIL_DOMAINS)}"
        methods = rng.sample(V.CONTACT, 2 if rng.random() < 0.45 else 1)
        cdays = sorted(rng.sample(range(0, SPAN_DAYS - 5), len(methods)))
        for i, (d, (label, phrase)) in enumerate(zip(cdays, methods, strict=True)):
            phrase = phrase.format(phone=phone, email=email)
            text = f"{o} {phrase}." if i == 0 else f"{o} changed contact preference: {phrase}."
            self.add(self.dt(d), owner, text, "contact", slot=("contact", o), value=label)
        # payment plan
        if rng.random() < 0.45:
            reason = rng.choice(V.PLAN_REASONS)
            amounts = rng.sample([25, 30, 40, 50, 60, 75, 80, 100], 2 if rng.random() < 0.4 else 1)
            pdays = sorted(rng.sample(range(10, SPAN_DAYS - 5), len(amounts)))
            for i, (d, amt) in enumerate(zip(pdays, amounts, strict=True)):
                months = rng.randint(3, 12)
                text = (
                    f"{o} set up a payment plan for {reason}: £{amt} a month over {months} months."
                    if i == 0
                    else f"{o}'s payment plan for {reason} changed to £{amt} a month."
                )
                self.add(self.dt(d), owner, text, "plan", slot=("plan", o), value=f"£{amt}", reason=reason)
        # invoices
        for _ in range(rng.randint(2, 4)):
            self._invoice(owner, rng.randint(3, SPAN_DAYS - 1))
        # complaints
        for topic in rng.sample(V.COMPLAINTS, rng.choice([0, 1, 1, 2])):
            self.add(
                self.dt(rng.randint(5, SPAN_DAYS - 2)),
                owner,
                rng.choice(
                    [
                        f"{o} complained about {topic}.",
                        f"Complaint from {o} today: {topic}. Apologised.",
                        f"{o} was unhappy about {topic}; passed to the practice manager.",
                    ]
                ),  # fmt: skip
                "complaint",
                topic=topic,
            )

    def _invoice(self, owner: dict, day: int) -> dict:
        rng = self.rng
        pet = rng.choice(owner["pets"])
        day = max(day, pet["reg_day"] + 1)
        inv = self.code("INV", 5)
        item = rng.choice(V.INVOICE_ITEMS)
        amount = f"£{rng.randint(18, 900)}.{rng.choice(['00', '50', '20', '95', '40'])}"
        text = rng.choice(
            [
                f"Invoice {inv} to {owner['name']}: {amount} for {pet['name']}'s {item}.",
                f"{owner['name']} paid invoice {inv}, {amount}, {item} for {pet['name']}.",
                f"Sent {inv} ({item}, {pet['name']}) to {owner['name']}, {amount} due in 14 days.",
            ]
        )
        return self.add(self.dt(day), owner, text, "invoice", pet, code=inv, item=item, amount=amount)

    def _fit_size(self) -> None:
        rng = self.rng
        target_facts = round(self.n_mem * rng.uniform(0.88, 0.91))
        while len(self.events) < target_facts:
            owner = rng.choice(self.owners)
            pet = rng.choice(owner["pets"])
            r = rng.random()
            if r < 0.35:
                taken = {
                    self.day_of(e["dt"]) for e in self.events if e["type"] == "weight" and e["pet"] is pet
                }
                free = [d for d in range(25, SPAN_DAYS - 3) if d not in taken]
                self._weight(owner, pet, rng.choice(free))
            elif r < 0.65:
                self._invoice(owner, rng.randint(3, SPAN_DAYS - 1))
            else:
                used = {e["purpose"] for e in self.events if e["type"] == "book" and e["pet"] is pet}
                free = [a for a in V.APPOINTMENTS if a not in used]
                if free:
                    self._appointment(owner, pet, rng.choice(free), rng.randint(21, SPAN_DAYS - 12))
        droppable = ("invoice", "weight", "lab", "complaint", "vacc", "allergy", "boarding")
        while len(self.events) > target_facts:
            weights = Counter(e["pet"]["name"] for e in self.events if e["type"] == "weight")
            cands = [
                e
                for e in self.events
                if e["type"] in droppable and (e["type"] != "weight" or weights[e["pet"]["name"]] > 2)
            ]
            if not cands:
                break
            self.events.remove(rng.choice(cands))
        for _ in range(self.n_mem - len(self.events)):
            owner = rng.choice(self.owners)
            pet = rng.choice(owner["pets"])
            text = rng.choice(V.NOISE).format(O=owner["name"], P=pet["name"])
            self.add(self.dt(rng.randint(pet["reg_day"] + 1, SPAN_DAYS - 1)), owner, text, "noise", pet)

    # -- finishing -----------------------------------------------------------------------------------------
    def finish(self) -> None:
        first: dict[str, datetime] = {}
        for e in self.events:
            if e["pet"] is not None and e["type"] != "register":
                first[e["pet"]["name"]] = min(first.get(e["pet"]["name"], e["dt"]), e["dt"])
        for e in self.events:
            if e["type"] == "register" and e["pet"]["name"] in first:
                e["dt"] = min(e["dt"], first[e["pet"]["name"]] - timedelta(minutes=7))
        self.events.sort(key=lambda e: e["dt"])
        seen: set[datetime] = set()
        for e in self.events:
            while e["dt"] in seen:
                e["dt"] += timedelta(minutes=1)
            seen.add(e["dt"])
        self.events.sort(key=lambda e: e["dt"])
        self._render_weights()
        for i, e in enumerate(self.events, 1):
            e["id"] = f"{self.key}-m{i}"
        by_slot: dict[tuple, list[dict]] = defaultdict(list)
        for e in self.events:
            if e.get("slot"):
                by_slot[e["slot"]].append(e)
        self.end_dt = self.events[-1]["dt"]
        for versions in by_slot.values():
            for i, e in enumerate(versions):
                e["prev"] = versions[i - 1] if i else None
                e["next_dt"] = versions[i + 1]["dt"] if i + 1 < len(versions) else None
                e["is_first"] = i == 0
        self.by_type: dict[str, list[dict]] = defaultdict(list)
        for e in self.events:
            self.by_type[e["type"]].append(e)
        self.pet_day: Counter = Counter((e["pet"]["name"], e["dt"].date()) for e in self.events if e["pet"])
        self.type_day: Counter = Counter(
            (e["type"], e["user"] if e["pet"] is None else e["pet"]["name"], e["dt"].date())
            for e in self.events
        )
        self.booked_on: Counter = Counter(
            (e["pet"]["name"], e["when"]) for e in self.events if e["type"] in ("book", "move")
        )
        self.rota_ev = {e["vet"]: e for e in self.by_type["rota"]}
        self.reg_ev = {e["pet"]["name"]: e for e in self.by_type["register"]}

    def memories(self) -> list[dict]:
        return [
            {"id": e["id"], "content": e["content"], "created_at": _iso(e["dt"]), "user": e["user"]}
            for e in self.events
        ]


# ---------------------------------------------------------------------------------------------------------
# Questions


def _window(evidence: list[dict], end: datetime) -> tuple[datetime, datetime]:
    lo = max(e["dt"] for e in evidence) + timedelta(minutes=20)
    hi = end + timedelta(days=10)
    for e in evidence:
        if e.get("next_dt"):
            hi = min(hi, e["next_dt"] - timedelta(minutes=1))
    return lo, hi


def _candidates(pr: _Practice, rng: random.Random) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)

    def q(
        kind: str, text: str, evidence: list[dict], at: datetime | None = None, open_: bool = False
    ) -> None:
        lo, hi = _window(evidence, pr.end_dt)
        if open_:
            hi = pr.end_dt + timedelta(days=10)
        if at is not None:
            if not lo <= at <= hi:
                return
            lo = hi = at
        elif hi <= lo:
            return
        if (
            kind == "paraphrase"
            and paraphrase_overlap(text, [e["content"] for e in evidence]) > _PARAPHRASE_MARGIN
        ):
            return
        changes = [] if open_ else [(e["prev"], e) for e in evidence if e.get("prev") is not None]
        out[kind].append(
            {"kind": kind, "text": text, "evidence": evidence, "lo": lo, "hi": hi, "changes": changes}
        )

    def species_unique(e: dict) -> bool:
        pet = e["pet"]
        return sum(1 for p in e["owner"]["pets"] if p["species"] == pet["species"]) == 1

    def owner_pet(e: dict) -> str:
        return f"{e['owner']['name']}'s {e['pet']['species']}"

    def asked_on(day: date) -> datetime:
        return datetime(
            day.year, day.month, day.day, rng.randint(9, 17), rng.randrange(60), rng.randrange(60)
        )

    households = {e["pet"]["name"]: e for e in pr.by_type["household"]}

    for e in pr.events:
        t, pet = e["type"], e["pet"]
        p = pet["name"] if pet else None
        o = e["owner"]["name"]
        qd = fmt_question_date(e["dt"].date(), rng)
        reg = pr.reg_ev.get(p) if p else None
        hh = households.get(p) if p else None
        hop1 = []  # (question prefix describing the pet without naming it, evidence)
        if reg is not None and reg is not e and species_unique(e):
            hop1.append((owner_pet(e), [reg]))
        if hh is not None and hh is not e:
            hop1.append((f"the pet {hh['member']} brings in", [hh]))
        if t == "register":
            sp = pet["species"]
            q("single-hop", rng.choice([f"What breed is {p}?", f"What breed of {sp} is {p}?"]), [e])
            q("single-hop", f"How old was {p} when {o} registered them?", [e])
            q("paraphrase", f"Which pedigree or cross does the animal named {p} belong to?", [e])
            q("paraphrase", f"How many birthdays had {p} clocked up upon joining our books?", [e])
            q("temporal", f"When did {o} first register {p} with us?", [e])
        elif t == "weight":
            q(
                "single-hop",
                rng.choice(
                    [f"What is {p}'s latest weight?", f"How much did {p} weigh at the last weigh-in?"]
                ),
                [e],
            )
            q("paraphrase", rng.choice([f"How heavy is the animal called {p} lately, going by the scales?",
                                        f"What figure did the scales give for {p} most recently?"]), [e])  # fmt: skip
            if pr.type_day[("weight", p, e["dt"].date())] == 1:
                q("temporal", f"What did {p} weigh on {qd}?", [e], open_=True)
                n = rng.randint(2, 6)
                at = asked_on(e["dt"].date() + timedelta(days=n))
                q("temporal", f"What did {p} weigh at the weigh-in {n} days ago?", [e], at, open_=True)
            for desc, ev in hop1:
                q("multi-hop", f"How much does {desc} weigh now?", [*ev, e])
        elif t == "diet":
            q("single-hop", rng.choice([f"What food is {p} on at the moment?", f"What is {p} fed now?"]), [e])
            q("paraphrase", f"What does {p} get served in the bowl at mealtimes lately?", [e])
            if not e["is_first"]:
                q("temporal", f"When did {p}'s diet last change?", [e])
            for desc, ev in hop1:
                q("multi-hop", f"What food is {desc} on now?", [*ev, e])
        elif t == "allergy":
            q("single-hop", f"What is {p} allergic to?", [e])
            q("paraphrase", f"Which substance must be kept away from {p} owing to a sensitivity?", [e])
            for desc, ev in hop1:
                q("multi-hop", f"What is {desc} allergic to?", [*ev, e])
        elif t == "chip":
            c = e["code"]
            q(
                "identifier",
                rng.choice(
                    [
                        f"Which patient is microchip {c} registered to?",
                        f"Whose animal carries chip number {c}?",
                    ]
                ),
                [e],
            )
            for desc, ev in hop1:
                q("multi-hop", f"What microchip number do we hold for {desc}?", [*ev, e])
        elif t == "policy":
            c = e["code"]
            q("identifier", f"Which insurer is policy {c} with?", [e])
            q("identifier", f"Which pet does policy {c} cover?", [e])
            q("single-hop", f"Which insurer is {p} insured with?", [e])
            q("paraphrase", f"Which company underwrites the accident-and-illness cover for {p}?", [e])
            for desc, ev in hop1:
                q(
                    "multi-hop",
                    rng.choice([f"What is the policy number for {desc}?", f"Who insures {desc}?"]),
                    [*ev, e],
                )
        elif t == "vacc":
            q("temporal", f"When did {p} have the {e['vaccine']}?", [e])
            if pr.pet_day[(p, e["dt"].date())] == 1:
                q("temporal", f"Which jab did {p} get on {qd}?", [e], open_=True)
        elif t == "due":
            q("temporal", f"When is {p}'s {e['vaccine']} due?", [e])
            q("single-hop", f"Which jab is {p} due to have next?", [e])
            for desc, ev in hop1:
                q("multi-hop", f"Which vaccination is {desc} due for?", [*ev, e])
        elif t == "med":
            drug, desc = e["drug"], V.DRUGS[e["drug"]][0]
            q(
                "single-hop",
                rng.choice([f"What dose of {drug} is {p} on?", f"How much {drug} does {p} get now?"]),
                [e],
            )
            q("paraphrase", f"How much of the {desc} does {p} take, and how often?", [e])
            if not e["is_first"]:
                q("temporal", f"When was {p}'s {drug} dose last changed?", [e])
            else:
                q("temporal", f"When did {p} start on {drug}?", [e], open_=True)
        elif t in ("book", "move"):
            pur = e["purpose"]
            if t == "book":
                q("single-hop", f"Which vet is {p}'s {pur} with?", [e])
                rota = pr.rota_ev.get(e["vet"])
                if rota is not None:
                    q("multi-hop", f"Which days does the vet seeing {p} for the {pur} work?", [e, rota])
                    if reg is not None and species_unique(e):
                        q(
                            "multi-hop",
                            f"On which days is the vet booked for the {pur} of {owner_pet(e)} in?",
                            [reg, e, rota],
                        )
            if t == "book":
                q(
                    "temporal",
                    rng.choice([f"When is {p}'s {pur} booked for?", f"What date is {p}'s {pur} now?"]),
                    [e],
                )
            else:
                q(
                    "temporal",
                    rng.choice(
                        [
                            f"What date was {p}'s {pur} moved to?",
                            f"When is {p}'s {pur} now, after the change?",
                        ]
                    ),
                    [e],
                )
                q(
                    "paraphrase",
                    f"Following the rescheduling, on which day should {p} turn up for the {pur}?",
                    [e],
                )
            if t == "book" and e["next_dt"] is None and pr.booked_on[(p, e["when"])] == 1:
                q("temporal", f"What is {p} booked in for on {fmt_question_date(e['when'], rng)}?", [e])
        elif t == "op":
            q("single-hop", f"Which vet did {p}'s {e['op']}?", [e])
            q("paraphrase", f"Who held the scalpel when {p} went under the knife?", [e])
            q("temporal", f"When did {p} have the {e['op']}?", [e])
            if pr.pet_day[(p, e["dt"].date())] == 1:
                q("temporal", f"What procedure did {p} have on {qd}?", [e])
            rota = pr.rota_ev.get(e["vet"])
            if rota is not None:
                q("multi-hop", f"Which days does the vet who did {p}'s {e['op']} work?", [e, rota])
                if reg is not None and species_unique(e):
                    q(
                        "multi-hop",
                        f"On which days is the vet who operated on {owner_pet(e)} in?",
                        [reg, e, rota],
                    )
                if hh is not None:
                    q(
                        "multi-hop",
                        f"Which days does the vet who operated on the pet {hh['member']} brings in work?",
                        [hh, e, rota],
                    )
            for desc, ev in hop1:
                q("multi-hop", f"Which vet operated on {desc}?", [*ev, e])
        elif t == "cancel":
            q("single-hop", f"Is {p}'s {e['purpose']} still going ahead?", [e])
        elif t == "recovery":
            q("single-hop", f"How was {p} at the check after the {e['op']}?", [e])
            q("paraphrase", f"How was {p} getting on when examined following surgery?", [e])
        elif t == "boarding":
            c = e["code"]
            q("single-hop", f"How many nights is {p} boarding for?", [e])
            q(
                "paraphrase",
                f"For how many evenings will {p} be lodging on our premises while the household travels?",
                [e],
            )
            q("temporal", f"When does {p}'s boarding stay start?", [e])
            q("identifier", f"Which animal is boarding booking {c} for?", [e])
        elif t == "lab":
            c = e["code"]
            q("identifier", f"What did lab reference {c} show?", [e])
            q("identifier", f"Which patient was lab ref {c} for?", [e])
            q("single-hop", f"What did {p}'s {e['test']} show?", [e])
            q("paraphrase", f"What did the laboratory conclude after analysing {p}'s specimen?", [e])
            q("temporal", f"When did {p}'s {e['test']} results come back?", [e])
        elif t == "invoice":
            c = e["code"]
            q("identifier", f"What was invoice {c} for?", [e])
            q("identifier", f"How much did invoice {c} come to?", [e])
            q("identifier", f"Who was invoice {c} issued to?", [e])
        elif t == "pref":
            q("single-hop", f"Which vet does {o} prefer to see?", [e])
            q("paraphrase", f"Whom would {o} rather have examining the animals, given the choice?", [e])
            rota = pr.rota_ev.get(e["vet"])
            if rota is not None:
                q("multi-hop", f"Which days is {o}'s preferred vet in?", [e, rota])
            if not e["is_first"]:
                q("temporal", f"When did {o} change preferred vet?", [e])
        elif t == "household":
            m = e["member"]
            q("single-hop", f"Who is allowed to bring {p} in apart from {o}?", [e])
            q("single-hop", f"What is {m}'s relation to {o}?", [e])
            q(
                "paraphrase",
                f"Besides the registered keeper, which relative or housemate sometimes accompanies {p} to visits?",
                [e],
            )
            q("temporal", f"When was {m} added as someone who can bring {p} in?", [e])
        elif t == "contact":
            q("single-hop", f"How does {o} want to be contacted now?", [e])
            q("paraphrase", f"What's the best way to reach {o} lately?", [e])
            if not e["is_first"]:
                q("temporal", f"When did {o} last change how they want to be contacted?", [e])
        elif t == "plan":
            q("single-hop", f"How much is {o}'s monthly payment plan?", [e])
            q(
                "paraphrase",
                f"What sum does {o} remit in regular instalments to clear the outstanding balance?",
                [e],
            )
            if e["is_first"]:
                q("single-hop", f"What is {o}'s payment plan for?", [e], open_=True)
        elif t == "complaint":
            n_comp = sum(1 for c in pr.by_type["complaint"] if c["owner"] is e["owner"])
            if n_comp == 1:
                q("single-hop", f"What did {o} complain about?", [e])
                q("paraphrase", f"What grievance did {o} air about the way things were handled?", [e])
            if pr.type_day[("complaint", e["user"], e["dt"].date())] == 1:
                q("temporal", f"What did {o} complain about on {qd}?", [e])
                n = rng.randint(2, 9)
                at = asked_on(e["dt"].date() + timedelta(days=n))
                q("temporal", f"What was {o}'s complaint {n} days ago?", [e], at)
        elif t == "rota":
            q("single-hop", f"Which days does {e['vet']} work?", [e])
    return out


def _select(pr: _Practice, rng: random.Random, quotas: dict[str, int]) -> list[dict]:
    pools = _candidates(pr, rng)
    used: Counter = Counter()
    texts: set[str] = set()
    chosen: list[dict] = []
    for kind in sorted(quotas, key=lambda k: len(pools[k])):
        pool = pools[kind]
        rng.shuffle(pool)
        picked = 0
        while picked < quotas[kind] and pool:
            # prefer questions that bring in the most notes no chosen question cites yet
            def fresh(c: dict) -> int:
                return sum(1 for e in c["evidence"] if not used[e["id"]])

            best = max(fresh(c) for c in pool)
            c = rng.choice([c for c in pool if fresh(c) == best])
            pool.remove(c)
            if c["text"] in texts:
                continue
            texts.add(c["text"])
            for e in c["evidence"]:
                used[e["id"]] += 1
            chosen.append(c)
            picked += 1
    chosen.sort(key=lambda c: (c["lo"], c["text"]))
    return chosen


# ---------------------------------------------------------------------------------------------------------
# The set


def _split(total: int, weights: list[float]) -> list[int]:
    raw = [total * w / sum(weights) for w in weights]
    out = [int(x) for x in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - out[i], reverse=True)[: total - sum(out)]:
        out[i] += 1
    return out


def generate_with_changes(seed: int = 0) -> tuple[dict, list[dict]]:
    rng = random.Random(f"{NAME}:{seed}")
    n_agents = rng.randint(9, 11)
    total_mem = rng.randint(2356, 2392)
    total_q = rng.randint(1576, 1596)
    mem_counts = _split(total_mem, [rng.uniform(0.75, 1.25) for _ in range(n_agents)])
    mem_counts = [max(175, min(370, m)) for m in mem_counts]
    q_counts = _split(total_q, mem_counts)
    kind_totals = dict(zip(SHARES, _split(total_q, list(SHARES.values())), strict=True))
    # per-agent quotas, spread so that the totals come out exact
    per_kind = {k: _split(kind_totals[k], q_counts) for k in SHARES}
    codes: set[str] = set()
    agents, changes = [], []
    for a in range(n_agents):
        key = f"v{a + 1:02d}"
        start = date(2024, 9, 2) + timedelta(days=rng.randint(0, 220))
        pr = _Practice(rng, key, start, mem_counts[a], codes)
        pr.finish()
        quotas = {k: per_kind[k][a] for k in SHARES}
        chosen = _select(pr, rng, quotas)
        questions = []
        for i, c in enumerate(chosen, 1):
            span = (c["hi"] - c["lo"]).total_seconds()
            at = c["lo"] + timedelta(seconds=int(rng.random() * max(0, span)))
            office = at.replace(hour=rng.randint(8, 18))  # questions come mostly in working hours
            if c["lo"] <= office <= c["hi"]:
                at = office
            qid = f"{key}-q{i}"
            questions.append({"id": qid, "text": c["text"], "kind": c["kind"],
                              "evidence": [e["id"] for e in c["evidence"]], "asked_at": _iso(at)})  # fmt: skip
            for earlier, later in c["changes"]:
                changes.append({"question": qid, "earlier": earlier["id"], "later": later["id"]})
        agents.append({"key": key, "memories": pr.memories(), "questions": questions})
    return {"name": NAME, "agents": agents}, changes


def generate(seed: int = 0) -> dict:
    return generate_with_changes(seed)[0]


def stats(data: dict) -> dict:
    questions = [q for a in data["agents"] for q in a["questions"]]
    memories = [m for a in data["agents"] for m in a["memories"]]
    used = {e for q in questions for e in q["evidence"]}
    ev = Counter(len(q["evidence"]) for q in questions)
    return {
        "name": data["name"],
        "agents": len(data["agents"]),
        "memories": len(memories),
        "questions": len(questions),
        "by_kind": dict(sorted(Counter(q["kind"] for q in questions).items())),
        "evidence_per_question": {str(k): v for k, v in sorted(ev.items())},
        "users": len({(a["key"], m["user"]) for a in data["agents"] for m in a["memories"]}),
        "unused_memory_share": round(1 - len(used) / len(memories), 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=f"python -m bench.conversations.{NAME}", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stats", action="store_true", help="print statistics instead of the set")
    ap.add_argument("--out", help="write the set (JSON) to this file")
    args = ap.parse_args(argv)
    data, changes = generate_with_changes(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({**data, "changes": changes}, fh, ensure_ascii=False, indent=1)
    if args.stats:
        print(json.dumps({**stats(data), "changes": len(changes)}, indent=1))
    elif not args.out:
        json.dump({**data, "changes": changes}, sys.stdout, ensure_ascii=False)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
