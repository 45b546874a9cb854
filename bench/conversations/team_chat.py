"""A conversational memory set: what an agent in a small company's team chat remembers about colleagues and
projects over six months, and questions that cite the memories answering them.

    python -m bench.conversations.team_chat --seed 0 --out team_chat.json --stats

Each agent is one company's chat: who reports to whom, who owns which service, projects whose dates slip,
decisions reversed later, personal facts, a weekly on-call rota with swaps, customer incidents with ticket
ids, feature flags and rebuilt hosts, company events (an offsite, a hackathon), and small talk that answers
nothing. Every fact is stated by exactly one memory; a fact that changed (a reversed decision, a handed-over
service, a slipped date, a swapped on-call week) keeps its earlier memory, and a question about the current
state cites only the later one. Questions are asked after every memory of the fact they are about."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

from bench.conversations import team_chat_vocab as V

NAME = "team_chat"
SHARES = {"single-hop": 0.24, "paraphrase": 0.2, "multi-hop": 0.19, "temporal": 0.24, "identifier": 0.13}
AGENTS = 10
FOUNDERS = 14  # in the company from the start; three more join part-way
FIRST_MONDAY = date(2025, 1, 6)
WEEKS = 26


@dataclass
class Person:
    name: str
    pos: str
    sub: str
    role: str
    start: date  # founders started long before the chat; joiners during it
    manager: Person | None = None
    reports_memory: int = -1


def day_text(d: date, rng: random.Random) -> str:
    """A date as people write it in chat, in one of several forms."""
    th = "th" if 10 <= d.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
    return rng.choice(
        [f"{d.day} {d:%B}", f"{d:%B} {d.day}", f"{d:%A} {d.day} {d:%B}", f"the {d.day}{th} of {d:%B}"]
    )


def bare(symptom: str) -> str:
    return symptom.removeprefix("a ").removeprefix("an ")


class Team:
    """One agent's company: its people and facts so far, its memories, and candidate questions by kind and by
    the fact they test."""

    def __init__(self, key: str, rng: random.Random) -> None:
        self.key, self.rng = key, rng
        self.start = FIRST_MONDAY + timedelta(weeks=rng.randrange(20))
        self.end = self.start + timedelta(weeks=WEEKS)
        self.memories: list[dict] = []
        self.candidates: dict[str, dict[str, list[tuple]]] = {kind: defaultdict(list) for kind in SHARES}
        self.people: list[Person] = []
        self.services: list[tuple[str, str, str]] = []  # (name, what it does, the same said otherwise)
        self.owner_of: dict[str, tuple[Person, int]] = {}  # services that never changed hands
        self.ships: list[tuple[date, int, str]] = []  # (day, memory, project)
        self.events: list[tuple[str, date, int]] = []  # (kind, last day, memory)
        self.joined: dict[str, int] = {}  # joiner's name -> memory

    @property
    def founders(self) -> list[Person]:
        return self.people[:FOUNDERS]

    @property
    def staff(self) -> list[Person]:
        """Everyone who has a manager: all but the head."""
        return self.people[1:]

    def day(self, lo: int, hi: int) -> date:
        """A day between lo and hi days after the chat began, inside the chat's span."""
        return self.start + timedelta(days=self.rng.randint(max(lo, 0), min(hi, WEEKS * 7 - 1)))

    def present(self, when: date, among: list[Person]) -> list[Person]:
        return [p for p in among if p.start <= when]

    def note(self, when: date, person: Person, shape: str, **slots: str) -> int:
        content = shape.format(n=person.name, pos=person.pos, sub=person.sub, **slots)
        content = content[0].upper() + content[1:] if content.startswith("the ") else content
        created = datetime.combine(when, time(self.rng.randint(8, 18), self.rng.randrange(60)))
        self.memories.append({"content": content, "created_at": created, "user": person.name.lower()})
        return len(self.memories) - 1

    def ask(self, kind: str, fact: str, text: str, evidence: list[int], family: tuple[int, ...] = (),
            identifier: str | None = None) -> None:  # fmt: skip
        """A candidate question; `family`: uncited memories of its fact, all stored before it is asked."""
        self.candidates[kind][fact].append((text, evidence, family, identifier))


def add_people(team: Team) -> None:
    """A head, three managers, ten staff, and three who join part-way; everyone's line manager said once."""
    rng, ask = team.rng, team.ask
    cast = rng.sample(V.PEOPLE, FOUNDERS + 3)
    team.people = [
        Person(n, pos, sub, rng.choice(V.ROLES), team.start - timedelta(days=400)) for n, pos, sub in cast
    ]
    head, managers, joiners = team.people[0], team.people[1:4], team.people[FOUNDERS:]
    head.role = "CTO"
    for p in team.staff:
        p.manager = head if p in managers else rng.choice(managers)
    for p in joiners:
        p.start = team.day(14, 130)
        said = team.note(p.start, p, rng.choice(V.JOIN_SHAPES), role=p.role, date=day_text(p.start, rng))
        team.joined[p.name] = said
        ask("temporal", "join date", rng.choice(V.JOIN_QUESTIONS).format(n=p.name), [said])
        ask("single-hop", "join role", f"What role did {p.name} join as?", [said])
    for p in team.staff:
        assert p.manager is not None
        when = p.start + timedelta(days=rng.randint(0, 3)) if p in joiners else team.day(0, 20)
        p.reports_memory = team.note(when, p, rng.choice(V.REPORTS_SHAPES), m=p.manager.name)
        ask("single-hop", "manager", rng.choice(V.MANAGER_QUESTIONS).format(n=p.name), [p.reports_memory])


def add_services(team: Team) -> None:
    """Eight services owned by founders; three change hands part-way, and only the handover says who owns
    them now."""
    rng, ask = team.rng, team.ask
    changed_hands: set[str] = set()  # old and new owners of the services that changed hands
    for i, (svc, what, para) in enumerate(team.services):
        owner = rng.choice(team.founders)
        first = team.note(team.day(0, 30), owner, rng.choice(V.OWNS_SHAPES), svc=svc, what=what)
        if i < 3:
            new = rng.choice([p for p in team.founders[1:] if p is not owner])
            when = team.day(60, 170)
            later = team.note(when, new, rng.choice(V.HANDOFF_SHAPES), svc=svc, m=owner.name,
                              date=day_text(when, rng))  # fmt: skip
            changed_hands |= {owner.name, new.name}
            ask("temporal", "current owner", rng.choice(V.CURRENT_OWNER_QUESTIONS).format(svc=svc), [later],
                (first,))  # fmt: skip
            continue
        team.owner_of[svc] = (owner, first)
        ask("single-hop", "owner", rng.choice(V.OWNER_QUESTIONS).format(svc=svc), [first])
        ask("paraphrase", "owner", rng.choice(V.SERVICE_PARAPHRASE).format(para=para), [first])
    for p in team.staff:  # only a manager who owns exactly one service, and always has, gives one answer
        assert p.manager is not None
        mine = [m for o, m in team.owner_of.values() if o is p.manager]
        if len(mine) == 1 and p.manager.name not in changed_hands:
            ask("multi-hop", "manager's service", f"Which service does {p.name}'s manager own?",
                [p.reports_memory, mine[0]])  # fmt: skip


def add_projects(team: Team) -> None:
    """Six projects: a lead, a first target date, slips with reasons, and a ship date a little off the last
    target, so the ship date is said by the ship memory alone."""
    rng, ask, choice, randint = team.rng, team.ask, team.rng.choice, team.rng.randint
    reasons = rng.sample(V.SLIP_REASONS, len(V.SLIP_REASONS))
    projects = zip(rng.sample(V.PROJECTS, 6), rng.sample(team.founders[1:], 6), strict=True)
    for i, ((project, what, para), lead) in enumerate(projects):
        led = team.note(team.day(0, 25), lead, choice(V.LEAD_SHAPES), p=project, what=what)
        ask("single-hop", "lead", choice(V.LEAD_QUESTIONS).format(p=project), [led])
        ask("paraphrase", "lead", choice(V.LEAD_PARAPHRASE).format(para=para), [led])
        ask("multi-hop", "lead's manager", choice(V.LEAD_MANAGER_QUESTIONS).format(p=project),
            [led, lead.reports_memory])  # fmt: skip
        late = i == 5  # one project is still unshipped when the chat ends, so "when is it due now?" asks
        announced = team.day(60, 100) if late else team.day(7, 45)
        due = announced + timedelta(days=randint(100, 130) if late else randint(28, 70))
        chain = [team.note(announced, choice(team.founders), choice(V.PLAN_SHAPES), p=project,
                           date=day_text(due, rng))]  # fmt: skip
        for _ in range(choice([0, 1, 1, 2, 2])):
            told = max(due - timedelta(days=randint(1, 10)), announced + timedelta(days=2))
            if told >= team.end - timedelta(days=2):
                break
            announced, due, why = told, due + timedelta(days=randint(7, 28)), reasons.pop()
            chain.append(team.note(told, choice(team.founders[1:]), choice(V.SLIP_SHAPES), p=project,
                                   date=day_text(due, rng), why=why))  # fmt: skip
            ask("single-hop", "slip reason", f"Why did {project} slip to {day_text(due, rng)}?", [chain[-1]])
        shipped = due + timedelta(days=choice([-3, -2, -1, 1, 2, 3, 4]))
        everything = tuple(chain)
        if shipped < team.end - timedelta(days=1):
            out = team.note(shipped, choice(team.founders[1:]), choice(V.SHIP_SHAPES), p=project,
                            date=day_text(shipped, rng))  # fmt: skip
            team.ships.append((shipped, out, project))
            everything += (out,)
            ask("temporal", "ship date", choice(V.SHIP_QUESTIONS).format(p=project), [out], tuple(chain))
        else:
            ask("temporal", "current target", choice(V.TARGET_QUESTIONS).format(p=project), [chain[-1]],
                tuple(chain))  # fmt: skip
        if len(chain) > 1:  # the first date is a question only once a later one replaced it
            ask("temporal", "first target", choice(V.FIRST_TARGET_QUESTIONS).format(p=project), [chain[0]],
                everything)  # fmt: skip


def add_events(team: Team) -> None:
    """Four company events, two placed just before a ship and one before a joiner's first day, so that "what
    shipped the week after the offsite" has one answer."""
    rng, ask, randint = team.rng, team.ask, team.rng.randint
    joiners = team.people[FOUNDERS:]
    befores = [d for d, _, _ in rng.sample(team.ships, min(2, len(team.ships)))] + [rng.choice(joiners).start]
    for i, (kind, shapes, places) in enumerate(rng.sample(V.ANCHORS, 4)):
        last = befores[i] - timedelta(days=randint(1, 6)) if i < len(befores) else team.day(20, 175)
        first = last - timedelta(days=0 if kind in ("all-hands", "board meeting") else randint(1, 2))
        told = max(first - timedelta(days=randint(5, 20)), team.start)
        said = team.note(told, rng.choice(team.founders[1:]), rng.choice(shapes), place=rng.choice(places),
                         d1=day_text(first, rng), d2=day_text(last, rng))  # fmt: skip
        team.events.append((kind, last, said))
        ask("single-hop", "event place", V.ANCHOR_WHERE[kind], [said])
        ask("temporal", "event date", rng.choice(V.EVENT_DATE_QUESTIONS).format(kind=kind), [said])
        after = [memory for day, memory, _ in team.ships if last < day <= last + timedelta(days=7)]
        if len(after) == 1:
            text = rng.choice(V.SHIPPED_AFTER_QUESTIONS).format(kind=kind)
            ask("temporal", "shipped after event", text, after, (said,))
        started = [p for p in joiners if last < p.start <= last + timedelta(days=7)]
        if len(started) == 1:
            ask("temporal", "joined after event", f"Who joined in the week after the {kind}?",
                [team.joined[started[0].name]], (said,))  # fmt: skip


def add_decisions(team: Team) -> None:
    """Seven decisions, each reversed weeks later: only the reversal answers what holds now."""
    for first_shape, later_shape, questions in team.rng.sample(V.DECISIONS, 7):
        made = team.day(7, 100)
        first = team.note(made, team.rng.choice(team.founders), first_shape)
        later = team.note(made + timedelta(days=team.rng.randint(21, 63)), team.rng.choice(team.founders),
                          later_shape)  # fmt: skip
        team.ask("temporal", "current decision", team.rng.choice(questions), [later], (first,))


def add_personal_facts(team: Team) -> None:
    """Twenty-eight personal facts, each stated once, about one colleague."""
    for shapes, direct, para in team.rng.sample(V.FACTS, 28):
        p = team.rng.choice(team.people)
        said = team.note(team.day((p.start - team.start).days + 1, 180), p, team.rng.choice(shapes))
        team.ask("single-hop", "personal", direct, [said])
        team.ask("paraphrase", "personal", para, [said])


def add_rota(team: Team) -> None:
    """A weekly on-call rota, with three swaps announced days before their week."""
    rng, ask = team.rng, team.ask
    pager = rng.choice(V.PAGERS)
    weeks = range(2, 2 + rng.randint(18, 21))
    swapped = set(rng.sample(list(weeks), 3))
    covered: dict[
        date, tuple[int, tuple[int, ...]]
    ] = {}  # Monday -> (the memory answering, the one it overrode)
    last_person = None
    for week in weeks:
        monday = team.start + timedelta(weeks=week)
        on = rng.choice([p for p in team.present(monday, team.staff) if p is not last_person])
        last_person = on
        week_text = day_text(monday, rng)
        listed = team.note(monday - timedelta(days=rng.randint(4, 6)), on, rng.choice(V.ROTA_SHAPES), pager=pager,
                           date=week_text)  # fmt: skip
        asked_week = day_text(monday, rng)
        if week in swapped:
            cover = rng.choice([p for p in team.present(monday, team.staff) if p is not on])
            swap = team.note(monday - timedelta(days=rng.randint(1, 2)), cover, rng.choice(V.SWAP_SHAPES),
                             pager=pager, m=on.name, date=week_text)  # fmt: skip
            covered[monday] = (swap, (listed,))
            ask("temporal", "swapped week", f"Who actually covered {pager} the week of {asked_week}?", [swap],
                (listed,))  # fmt: skip
            continue
        covered[monday] = (listed, ())
        ask("single-hop", "on call", f"Who was on call for {pager} the week of {asked_week}?", [listed])
        ask("multi-hop", "on call's manager", f"Who is the manager of whoever had {pager} the week of "
            f"{asked_week}?", [listed, on.reports_memory])  # fmt: skip
    for kind, last, said in team.events:
        monday = last + timedelta(days=7 - last.weekday())
        if monday in covered:
            memory, family = covered[monday]
            ask("temporal", "on call after event", f"Who was on call for {pager} the week after the {kind}?",
                [memory], (said, *family))  # fmt: skip


def add_incidents(team: Team) -> None:
    """Eight customers with their account managers, and fourteen incidents, each with a ticket id, a fixer and
    the service at fault, told in one memory."""
    rng, ask, choice = team.rng, team.ask, team.rng.choice
    customers = rng.sample(V.CUSTOMERS, 8)
    account = {}
    for cust in customers:
        account[cust] = team.note(
            team.day(0, 60), choice(team.founders[1:]), choice(V.ACCOUNT_SHAPES), cust=cust
        )
        ask("single-hop", "account", choice(V.ACCOUNT_QUESTIONS).format(cust=cust), [account[cust]])
    prefix = choice(["INC", "SUP", "ZD", "OPS"])
    names = [svc for svc, _, _ in team.services]
    for (symptom, para, likely), number in zip(rng.sample(V.SYMPTOMS, 14), rng.sample(range(1000, 9999), 14),
                                               strict=True):  # fmt: skip
        cust, svc = choice(customers), choice([s for s in likely if s in names] or names)
        when = team.day(7, 180)
        fixer = choice(team.present(when, team.people))
        ticket = f"{prefix}-{number}"
        memory = team.note(when, fixer, choice(V.INCIDENT_SHAPES), cust=cust, symptom=symptom, ticket=ticket,
                           svc=svc, date=day_text(when, rng), bare=bare(symptom))  # fmt: skip
        inc = choice(
            [f"{cust}'s {bare(symptom)}", f"the {bare(symptom)} at {cust}", f"the {bare(symptom)} problem"]
        )
        ask("single-hop", "fixer", choice(V.INCIDENT_FIXER).format(inc=inc), [memory])
        ask("temporal", "incident date", choice(V.INCIDENT_DATE).format(inc=inc), [memory])
        ask("paraphrase", "fixer", choice(V.INCIDENT_PARAPHRASE).format(cust=cust, para=para), [memory])
        ask("paraphrase", "incident service", choice(V.INCIDENT_SERVICE_PARAPHRASE).format(cust=cust, para=para),
            [memory])  # fmt: skip
        for text in rng.sample(V.TICKET_QUESTIONS, 2):
            ask("identifier", "ticket", text.format(ticket=ticket), [memory], identifier=ticket)
        ask("multi-hop", "account of incident", f"Who handles the account of the customer that reported "
            f"{symptom}?", [memory, account[cust]])  # fmt: skip
        ask("multi-hop", "account of ticket", f"Who is the account manager for the customer behind {ticket}?",
            [memory, account[cust]])  # fmt: skip
        if fixer.manager is not None:
            ask("multi-hop", "fixer's manager", choice(V.FIXER_MANAGER_QUESTIONS).format(inc=inc),
                [memory, fixer.reports_memory])  # fmt: skip
        if svc in team.owner_of:
            owner, owns = team.owner_of[svc]
            ask("multi-hop", "service owner", f"Who owns the service that caused {inc}?", [memory, owns])
            if owner.manager is not None:
                ask("multi-hop", "service owner's manager", f"Who manages the owner of the service behind {inc}?",
                    [memory, owns, owner.reports_memory])  # fmt: skip


def add_flags_and_hosts(team: Team) -> None:
    """Feature flags and rebuilt hosts: identifiers, each named by one memory."""
    rng, ask = team.rng, team.ask
    for feature in rng.sample(V.FLAG_FEATURES, 5):
        slug = feature.removeprefix("the ").replace(" ", "_").replace("-", "").lower()
        flag = rng.choice([f"ff_{slug}", f"{slug}_rollout", f"enable_{slug}"])
        said = team.note(team.day(0, 180), rng.choice(team.founders[1:]), rng.choice(V.FLAG_SHAPES), feature=feature,
                         flag=flag)  # fmt: skip
        ask("identifier", "flag", rng.choice(V.FLAG_QUESTIONS).format(flag=flag), [said], identifier=flag)
        ask("single-hop", "flag owner", f"Who set up the feature flag for {feature}?", [said])
    for kind, problem in zip(rng.sample(V.HOST_KINDS, 4), rng.sample(V.HOST_PROBLEMS, 4), strict=True):
        host = f"{kind}-{rng.randint(1, 40):02d}"
        said = team.note(team.day(0, 180), rng.choice(team.founders[1:]), rng.choice(V.HOST_SHAPES), host=host,
                         problem=problem)  # fmt: skip
        ask("identifier", "host", rng.choice(V.HOST_QUESTIONS).format(host=host), [said], identifier=host)


def add_small_talk(team: Team) -> None:
    """Chat that mentions colleagues, services and projects but answers no question."""
    for _ in range(team.rng.randint(70, 130)):
        when = team.day(0, 181)
        speaker, other = team.rng.sample(team.present(when, team.people), 2)
        team.note(when, speaker, team.rng.choice(V.FILLERS), m=other.name, svc=team.rng.choice(team.services)[0],
                  p=team.rng.choice(V.PROJECTS)[0])  # fmt: skip


def build(key: str, rng: random.Random) -> Team:
    """One company's memories and candidate questions; facts that others refer to come first."""
    team = Team(key, rng)
    team.services = rng.sample(V.SERVICES, 8)
    for add in (add_people, add_services, add_projects, add_events, add_decisions, add_personal_facts, add_rota,
                add_incidents, add_flags_and_hosts, add_small_talk):  # fmt: skip
        add(team)
    return team


def quotas(total: int) -> dict[str, int]:
    """How many questions of each kind make `total`, by SHARES, rounding by the largest remainders."""
    exact = {kind: share * total for kind, share in SHARES.items()}
    counts = {kind: int(value) for kind, value in exact.items()}
    for kind in sorted(exact, key=lambda k: counts[k] - exact[k])[: total - sum(counts.values())]:
        counts[kind] += 1
    return counts


def agent(key: str, rng: random.Random) -> dict:
    """One agent: memories in time order, and questions of each kind drawn evenly over the facts they test."""
    team = build(key, rng)
    order = sorted(range(len(team.memories)), key=lambda i: team.memories[i]["created_at"])
    ids = {i: f"{key}-m{n}" for n, i in enumerate(order, 1)}
    memories = [{"id": ids[i], **team.memories[i]} for i in order]
    questions = []
    for kind, count in quotas(rng.randint(135, 165)).items():
        pools = [rng.sample(pool, len(pool)) for _, pool in sorted(team.candidates[kind].items())]
        drawn: list[tuple] = []
        seen: set[str] = set()
        while len(drawn) < count and any(pools):
            for pool in rng.sample(pools, len(pools)):
                if pool and len(drawn) < count:
                    text, evidence, family, identifier = pool.pop()
                    if text not in seen:
                        seen.add(text)
                        drawn.append((text, evidence, family, identifier))
        if len(drawn) < count:
            raise ValueError(f"{key}: only {len(drawn)} {kind} questions for {count}")
        for text, evidence, family, identifier in drawn:
            latest = max(team.memories[i]["created_at"] for i in (*evidence, *family))
            asked = latest + timedelta(hours=rng.randint(2, 24 * 20), minutes=rng.randrange(60))
            question = {"id": "", "text": text, "kind": kind, "evidence": [ids[i] for i in evidence],
                        "asked_at": asked.isoformat(timespec="seconds")}  # fmt: skip
            if identifier:
                question["identifier"] = identifier
            questions.append(question)
    rng.shuffle(questions)
    for n, question in enumerate(questions, 1):
        question["id"] = f"{key}-q{n}"
    for m in memories:
        m["created_at"] = m["created_at"].isoformat(timespec="seconds")
    return {"key": key, "memories": memories, "questions": questions}


def generate(seed: int = 0) -> dict:
    """The set for `seed`: the same seed always gives the same set."""
    rng = random.Random(f"{NAME}:{seed}")
    return {"name": NAME, "agents": [agent(f"a{n:02d}", rng) for n in range(1, AGENTS + 1)]}


def stats(data: dict) -> dict:
    """Counts of a set: agents, memories, questions, questions by kind, and evidence per question."""
    questions = [q for a in data["agents"] for q in a["questions"]]
    return {
        "name": data["name"],
        "agents": len(data["agents"]),
        "memories": sum(len(a["memories"]) for a in data["agents"]),
        "questions": len(questions),
        "by_kind": dict(sorted(Counter(q["kind"] for q in questions).items())),
        "evidence_per_question": round(sum(len(q["evidence"]) for q in questions) / len(questions), 2),
        "users": sum(len({m["user"] for m in a["memories"]}) for a in data["agents"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the set as JSON here")
    parser.add_argument("--stats", action="store_true", help="print the set's counts as JSON")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=1), encoding="utf-8")
    if args.stats:
        print(json.dumps(stats(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
