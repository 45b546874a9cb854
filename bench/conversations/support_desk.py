"""support_desk: a conversational memory set for a small internet-and-phone provider's customer support desk.

Each agent is one support team's assistant (one memory store) and keeps about six months of short, dated,
third-person notes on the 3-6 customers it deals with again and again: plans and plan changes, routers and
phones, addresses and home moves, engineer visits booked and then moved, reported faults, tickets, orders,
refunds and payment arrangements, contact preferences, the people on the account, complaints and how they
were settled, and small talk that answers nothing. Facts change; the earlier note stays, and a question about
the current state cites only the later one. Questions come in five kinds: single-hop, paraphrase, multi-hop,
temporal and identifier. Deterministic per seed, standard library only.

    python -m bench.conversations.support_desk --seed 0 --stats
    python -m bench.conversations.support_desk --seed 0 --out support_desk.json
"""

from __future__ import annotations

import argparse
import json
import random
import string
from datetime import datetime, timedelta

from bench.conversations import support_desk_vocab as V

NAME = "support_desk"
SHARES = {"single-hop": 0.24, "paraphrase": 0.20, "multi-hop": 0.19, "temporal": 0.24, "identifier": 0.13}
START = datetime(2025, 11, 3, 8)
END = datetime(2026, 4, 30, 20)
Q_END = datetime(2026, 5, 25, 20)
DAY = timedelta(days=1)


def _fmt(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _day(t: datetime) -> str:
    return f"{V.WEEKDAYS[t.weekday()]} {t.day} {V.MONTHS[t.month - 1]}"


def _a(thing: str) -> str:
    return ("an " if thing[0].lower() in "aeiou" else "a ") + thing


def _when(rng: random.Random, a: datetime, b: datetime) -> datetime:
    """A moment between a and b, moved into working hours (8:00-20:59) when that keeps it inside."""
    span = max(int((b - a).total_seconds()), 1)
    t = a + timedelta(seconds=rng.randrange(span))
    if not 8 <= t.hour <= 20:
        moved = t.replace(hour=rng.randint(8, 20), minute=rng.randrange(60), second=rng.randrange(60))
        if a < moved < b:
            t = moved
    return t


class _Agent:
    """One support team's memory store, built customer by customer, with its candidate questions."""

    def __init__(self, rng: random.Random, key: str, codes: set[str]):
        self.rng, self.key, self.codes = rng, key, codes
        self.mems: list[dict] = []
        self.contents: set[str] = set()
        self.cands: list[dict] = []
        self.used: dict[str, set[str]] = {pool: set() for pool in ("people", "streets", "routers", "phones")}

    # -- building blocks --------------------------------------------------------------------------------------
    def add(self, user: str, at: datetime, content: str, kind="fact", strict=True) -> dict | None:
        if content in self.contents or not 40 <= len(content) <= 200:
            if strict:
                raise ValueError(f"unusable memory: {content!r}")
            return None
        self.contents.add(content)
        mem = {"content": content, "at": at, "user": user, "kind": kind}
        self.mems.append(mem)
        return mem

    def ask(self, kind, text, evidence, group=None, before=None, change=None, window=None):
        c = dict(kind=kind, text=text, ev=evidence, group=group, before=before, change=change, window=window)
        self.cands.append(c | {"after": max(m["at"] for m in evidence)})

    def reports_only(self, c: dict) -> bool:
        """A question on what a customer reported in a window: its evidence holds every report made in it."""
        if not c["window"]:
            return True
        user, lo, hi = c["window"]
        found = [m for m in self.mems if m["user"] == user and m["kind"] == "report" and lo <= m["at"] < hi]
        return bool(found) and all(any(m is e for e in c["ev"]) for m in found)

    def unique(self, pool: str, options) -> str:
        pick = self.rng.choice([o for o in options if o not in self.used[pool]])
        self.used[pool].add(pick)
        return pick

    def code(self, kind: str) -> str:
        r = self.rng
        while True:
            digits = "".join(r.choice(string.digits) for _ in range(6))
            letters = "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(2))
            c = V.CODE_FORMATS[kind].format(
                d=digits, d5=digits[:5], d4=digits[:4], l=letters, l1=letters[0], x=r.randint(0, 9)
            )
            if c not in self.codes:
                self.codes.add(c)
                return c

    def money(self, lo: int, hi: int) -> str:
        return f"£{self.rng.randint(lo, hi)}.{self.rng.choice(['00', '50', '99', '25'])}"

    def code_mem(self, n: str, u: str, at: datetime, kind: str | None = None, issue: str | None = None):
        r = self.rng
        options = [c for c in V.CODE_MEMS if kind is None or c[0] == kind]
        ckind, tpl, *qs = r.choice(options)
        code = self.code(ckind)
        kw = {"i": issue or r.choice(V.ISSUES), "it": r.choice(V.ITEMS), "rr": r.choice(V.REFUND_REASONS)}
        text = tpl.format(n=n, code=code, amt=self.money(5, 60), **kw)
        mem = self.add(u, at, text, kind="report" if ckind == "ticket" else "fact", strict=False)
        if mem is None:
            return None
        mem["code"], mem["ckind"] = code, ckind
        self.ask("identifier", r.choice(qs).format(code=code), [mem], group=mem["content"])
        return mem

    def slot(self, n, u, name, versions, para):
        """A fact that may change: versions [(memory, value)]; questions on its current state cite the last."""
        r = self.rng
        last, _ = versions[-1]
        change = {"earlier": versions[-2][0], "later": last} if len(versions) > 1 else None
        self.ask("single-hop", last["sq"], [last], group=last["content"], change=change)
        self.ask("paraphrase", r.choice(para).format(n=n), [last], group=last["content"], change=change)
        return {"name": name, "mem": last, "change": change}

    # -- one customer -----------------------------------------------------------------------------------------
    def customer(self, n: str, budget: int) -> dict:
        r, u = self.rng, n.lower()
        t0 = START + timedelta(days=r.randint(0, 21), hours=r.randint(0, 9))

        def at(d0: float, d1: float) -> datetime:
            return _when(r, t0 + timedelta(days=d0), t0 + timedelta(days=d1))

        def pair(tpls, when, **kw):
            mem_tpl, q_tpl = r.choice(tpls)
            mem = self.add(u, when, mem_tpl.format(n=n, **kw))
            mem["sq"] = q_tpl.format(n=n, **kw)
            return mem

        self.code_mem(n, u, at(0, 0.5), "account")
        hops: dict[str, dict] = {}  # multi-hop targets: name -> current memory and change
        links: list[tuple[str, dict, str]] = []  # (phrase, memory, target excluded)

        # address, perhaps a move
        street, town = self.unique("streets", V.STREETS), r.choice(V.TOWNS)
        addr = f"{r.randint(2, 140)} {street}"
        addrs = [(pair(V.ADDRESS_MEM, at(0, 1), a=addr, t=town), addr)]
        move = None
        if r.random() < 0.5:
            new = f"{r.randint(2, 140)} {self.unique('streets', V.STREETS)}"
            move = pair(V.MOVE_MEM, at(45, 120), a=new, t=r.choice(V.TOWNS))
            addrs.append((move, new))
            self.ask("temporal", r.choice(V.MOVE_WHEN).format(n=n, a=new), [move])
        hops["address"] = self.slot(n, u, "address", addrs, V.ADDRESS_PARA)
        links.append((V.LINK_ADDRESS.format(a=addrs[-1][1]), addrs[-1][0], "address"))
        window = (move["at"] - 8 * DAY, move["at"] + DAY) if move else None

        def free_at(d0: float, d1: float) -> datetime:  # a time outside the week before a move
            for _ in range(50):
                t = at(d0, d1)
                if not window or not window[0] <= t <= window[1]:
                    return t
            return t

        # plan and its changes (never back to an earlier plan)
        plans = r.sample(sorted(V.PLANS), 3)
        price = {p: f"£{V.PLANS[p] - 0.01:.2f}" for p in plans}
        history = [(pair(V.PLAN_MEM, at(0, 2), p=plans[0], pr=price[plans[0]]), plans[0])]
        tpls = list(V.PLAN_CHANGE)  # up, down, either; each wording once, so "upgraded to" names one change
        for i, when in enumerate(sorted(at(20, 170) for _ in range(r.choice([0, 1, 1, 1, 2])))):
            up = V.PLANS[plans[i + 1]] > V.PLANS[plans[i]]
            tpl = r.choice([t for k, t in enumerate(tpls) if t and k != int(up)])
            tpls[tpls.index(tpl)] = None
            mem = pair([tpl], when, p=plans[i + 1], o=plans[i], pr=price[plans[i + 1]])
            history.append((mem, plans[i + 1]))
            self.ask("temporal", r.choice(V.PLAN_WHEN).format(n=n, p=plans[i + 1]), [mem])
        hops["plan"] = self.slot(n, u, "plan", history, V.PLAN_PARA)

        # router, serial, perhaps a replacement
        router = self.unique("routers", V.ROUTERS)
        routers = [(pair(V.ROUTER_MEM, at(0, 3), r=router, ra=_a(router)), router)]
        self.code_mem(n, u, at(3, 30), "serial")
        if r.random() < 0.45:
            new = self.unique("routers", V.ROUTERS)
            mem = pair(V.ROUTER_CHANGE, free_at(40, 160), r=new, ra=_a(new), o=router)
            routers.append((mem, new))
            self.ask("temporal", r.choice(V.ROUTER_WHEN).format(n=n, r=new), [mem])
        hops["router"] = self.slot(n, u, "router", routers, V.ROUTER_PARA)
        links.append((V.LINK_ROUTER.format(r=routers[-1][1]), routers[-1][0], "router"))

        # contact preference
        prefs = r.sample(V.CONTACTS, 2)
        contacts = [(pair(V.CONTACT_MEM, at(0, 4), c=prefs[0][0]), prefs[0])]
        if r.random() < 0.45:
            mem = pair(V.CONTACT_CHANGE, at(30, 170), c=prefs[1][0], o=prefs[0][1])
            contacts.append((mem, prefs[1]))
            self.ask("temporal", r.choice(V.CONTACT_WHEN).format(n=n, c=prefs[1][1]), [mem])
        hops["contact"] = self.slot(n, u, "contact", contacts, V.CONTACT_PARA)

        # phone
        if r.random() < 0.8:
            phone = self.unique("phones", V.PHONES)
            mem = pair(V.PHONE_MEM, at(0, 60), pha=_a(phone), s=r.choice(V.SIMS))
            hops["phone"] = self.slot(n, u, "phone", [(mem, phone)], V.PHONE_PARA)
            links.append((V.LINK_PHONE.format(pha=_a(phone)), mem, "phone"))

        # people on the account
        for role in r.sample(sorted(V.ROLES), r.choice([1, 1, 2])):
            mem_tpl, sq, pq, link = V.ROLES[role]
            person = self.unique("people", [f"{f} {s}" for f in V.PEOPLE_FIRST for s in V.SURNAMES])
            mem = self.add(u, at(0, 90), mem_tpl.format(n=n, p=person))
            mem["sq"] = sq.format(n=n)
            self.slot(n, u, role, [(mem, person)], [pq])
            links.append((link.format(p=person), mem, role))

        # direct debit and arrears
        days = r.sample(sorted(V.ORDINALS), 2)
        debits = [(pair(V.DEBIT_MEM, at(0, 10), d=V.ORDINALS[days[0]]), days[0])]
        if r.random() < 0.35:
            mem = pair(V.DEBIT_CHANGE, free_at(30, 170), d=V.ORDINALS[days[1]], o=V.ORDINALS[days[0]])
            debits.append((mem, days[1]))
            self.ask("temporal", V.DEBIT_WHEN[0].format(n=n, d=V.ORDINALS[days[1]]), [mem])
        self.slot(n, u, "debit", debits, V.DEBIT_PARA)
        if r.random() < 0.35:
            mem = pair(V.ARREARS_MEM, free_at(20, 170), amt=self.money(60, 400), k=r.randint(3, 10))
            self.slot(n, u, "arrears", [(mem, None)], V.ARREARS_PARA)
            self.ask("temporal", V.ARREARS_WHEN[0].format(n=n), [mem])

        # reported faults (one in the week before a move, none else near it)
        outages = []
        kinds = r.sample(V.OUTAGES, min(len(V.OUTAGES), max(3, budget // 10)))
        for i, (mem_o, s_o, _p) in enumerate(kinds):
            when = (
                _when(r, move["at"] - 6 * DAY, move["at"] - DAY / 2) if move and i == 0 else free_at(5, 175)
            )
            mem = self.add(u, when, r.choice(V.OUTAGE_MEM).format(n=n, o=mem_o), kind="report")
            outages.append(mem)
            self.ask("temporal", r.choice(V.OUTAGE_WHEN).format(n=n, s=s_o), [mem])
        if move:
            before = [m for m in outages if move["at"] - 7 * DAY <= m["at"] < move["at"]]
            text = r.choice(V.WEEK_BEFORE).format(n=n, a=addrs[-1][1])
            self.ask("temporal", text, before + [move], window=(u, move["at"] - 7 * DAY, move["at"]))
        if r.random() < 0.55:
            amt = self.money(5, 30)
            mem = pair(V.CREDIT_MEM, free_at(10, 175), amt=amt)
            self.slot(n, u, "credit", [(mem, amt)], V.CREDIT_PARA)
            self.ask("temporal", r.choice(V.CREDIT_WHEN).format(n=n, amt=amt), [mem])

        # engineer visits: booked, perhaps moved, then done
        start = free_at(5, 60)
        for pu in r.sample(V.VISIT_PURPOSES, r.choice([1, 2, 2])):
            if start > END - 25 * DAY:
                break
            day = (start + r.randint(6, 16) * DAY).replace(hour=0, minute=0, second=0)
            slot = r.choice(V.SLOTS)
            text = r.choice(V.VISIT_BOOK).format(n=n, d=_day(day), sl=slot, pu=pu)
            seq = [self.add(u, start, text, kind="report")]
            for _ in range(r.choice([0, 1, 1, 1, 2])):
                when = _when(r, seq[-1]["at"] + DAY / 4, day - DAY / 2)
                old, day, slot = day, day + r.randint(2, 9) * DAY, r.choice(V.SLOTS)
                text = r.choice(V.VISIT_MOVE).format(
                    n=n, o=_day(old), d=_day(day), sl=slot, pu=pu, why=r.choice(V.VISIT_WHY)
                )
                seq.append(self.add(u, when, text))
            change = {"earlier": seq[-2], "later": seq[-1]} if len(seq) > 1 else None
            text = r.choice(V.VISIT_NOW).format(n=n, pu=pu)
            self.ask("temporal", text, [seq[-1]], before=day, change=change)
            if len(seq) > 1:
                self.ask("temporal", V.VISIT_FIRST[0].format(n=n, pu=pu), seq[:2])
            if day + DAY > END:
                break
            done = _when(r, day + 9 * timedelta(hours=1), day + 17 * timedelta(hours=1))
            mem_tpl, sq = r.choice(V.VISIT_DONE)
            mem = self.add(u, done, mem_tpl.format(n=n, pu=pu, w=r.choice(V.VISIT_WORK)))
            mem["sq"] = sq.format(n=n, pu=pu)
            self.slot(n, u, "visit", [(mem, None)], [q.format(n=n, pu=pu) for q in V.VISIT_DONE_PARA])
            self.ask("temporal", V.DONE_WHEN[0].format(n=n, pu=pu), [mem])
            start = _when(r, done + 4 * DAY, done + 40 * DAY)

        # a complaint and its resolution
        if r.random() < 0.7:
            issue, fix, sq, pq = r.choice(V.COMPLAINTS)
            issue = issue.format(m=r.choice(V.MONTHS[:4] + V.MONTHS[10:]))
            text = r.choice(V.COMPLAINT_MEM).format(n=n, c=issue)
            first = self.add(u, free_at(10, 140), text, kind="report")
            first["sq"] = sq.format(n=n)
            self.slot(n, u, "complaint", [(first, issue)], [pq])
            self.ask("temporal", V.COMPLAINT_WHEN[0].format(n=n, c=issue), [first])
            when = _when(r, first["at"] + 2 * DAY, first["at"] + 20 * DAY)
            last = self.add(u, when, r.choice(V.RESOLVED_MEM).format(n=n, c=issue, r=fix))
            last["sq"] = r.choice(V.RESOLVED_Q).format(n=n)
            self.slot(n, u, "resolution", [(last, fix)], V.RESOLVED_PARA)
            self.ask("temporal", V.RESOLVED_WHEN[0].format(n=n), [last])

        # a ticket whose code can identify the customer in a multi-hop question
        ticket = self.code_mem(n, u, free_at(5, 170), "ticket")
        if ticket:
            links.append((V.LINK_TICKET.format(code=ticket["code"]), ticket, "ticket"))

        for phrase, link_mem, excluded in links:
            for target, tpl in V.HOP_TARGETS.items():
                if target == excluded or target not in hops:
                    continue
                text, hop = tpl.format(L=phrase), hops[target]
                text = text[0].upper() + text[1:]
                self.ask("multi-hop", text, [link_mem, hop["mem"]], change=hop["change"])
        return {"name": n, "user": u, "free_at": free_at, "routine": r.sample(V.ROUTINE, len(V.ROUTINE))}

    def filler(self, c: dict) -> None:
        """One more note on customer c: a routine fact, a ticket or order, or small talk."""
        r, n, u = self.rng, c["name"], c["user"]
        when = c["free_at"](1, 178)
        roll = r.random()
        if roll < 0.6 and c["routine"]:
            mem_tpl, sq, pq = c["routine"].pop()
            kw = {
                "x": r.randint(8, 90),
                "y": r.randint(60, 900),
                "amt": self.money(5, 25),
                "m": r.choice(V.MONTHS),
            }
            kw |= {"h": f"{r.randint(7, 10)}pm", "gb": r.choice(V.TOPUPS), "pl": r.choice(V.PLACES)}
            kw["ch"] = r.choice([1, 6, 11, 36, 44])
            mem = self.add(u, when, mem_tpl.format(n=n, **kw), strict=False)
            if mem:
                mem["sq"] = sq.format(n=n, **kw)
                self.slot(n, u, "routine", [(mem, None)], [pq])
        elif roll < 0.8:
            self.code_mem(n, u, when, r.choice(["ticket", "ticket", "order", "refund", "work"]))
        else:
            text = r.choice(V.SMALL_TALK).format(n=n, pl=r.choice(V.PLACES), m=r.choice(V.MONTHS))
            self.add(u, when, text, kind="small talk", strict=False)

    # -- questions --------------------------------------------------------------------------------------------
    def questions(self, total: int) -> list[dict]:
        r = self.rng
        counts = {k: int(total * s) for k, s in SHARES.items()}
        short = sorted(SHARES, key=lambda k: total * SHARES[k] - counts[k], reverse=True)
        for k in short[: total - sum(counts.values())]:
            counts[k] += 1
        chosen, texts, groups = [], set(), set()
        for kind in ("identifier", "multi-hop", "temporal", "paraphrase", "single-hop"):
            pool = [c for c in self.cands if c["kind"] == kind]
            r.shuffle(pool)
            got = 0
            for c in pool:
                if got == counts[kind]:
                    break
                if c["text"] in texts or (c["group"] and c["group"] in groups) or not self.reports_only(c):
                    continue
                lo, hi = c["after"] + DAY / 24, min(c["before"] or Q_END, c["after"] + 40 * DAY, Q_END)
                if hi <= lo:
                    continue
                c["asked"] = _when(r, lo, hi)
                texts.add(c["text"])
                groups.add(c["group"])
                chosen.append(c)
                got += 1
            if got < counts[kind]:
                raise RuntimeError(f"{self.key}: only {got} {kind} questions, wanted {counts[kind]}")
        return sorted(chosen, key=lambda c: c["asked"])


def generate_with_changes(seed: int = 0) -> tuple[dict, list[dict]]:
    rng = random.Random(f"{NAME}:{seed}")
    codes: set[str] = set()
    n_agents = rng.randint(9, 11)
    total_m, total_q = rng.randint(2350, 2650), rng.randint(1400, 1600)
    agents, changes = [], []
    for a in range(n_agents):
        key = f"s{a + 1:02d}"
        agent = _Agent(rng, key, codes)
        m_target = max(170, min(380, int(total_m / n_agents * rng.uniform(0.88, 1.12))))
        q_target = max(110, min(190, int(total_q / n_agents * rng.uniform(0.88, 1.12))))
        names = rng.sample(V.CUSTOMERS, rng.choice([3, 4, 4, 5, 5, 6]))
        custs = [agent.customer(n, m_target // len(names)) for n in names]
        while len(agent.mems) < m_target:
            agent.filler(rng.choice(custs))
        qs = agent.questions(q_target)
        agent.mems.sort(key=lambda m: m["at"])
        for i, m in enumerate(agent.mems, 1):
            m["id"] = f"{key}-m{i}"
        out_q = []
        for i, c in enumerate(qs, 1):
            qid = f"{key}-q{i}"
            ev = [m["id"] for m in c["ev"]]
            out_q.append(
                {
                    "id": qid,
                    "text": c["text"],
                    "kind": c["kind"],
                    "evidence": ev,
                    "asked_at": _fmt(c["asked"]),
                }
            )
            if c["change"]:
                earlier, later = c["change"]["earlier"]["id"], c["change"]["later"]["id"]
                changes.append({"question": qid, "earlier": earlier, "later": later})
        memories = [
            {"id": m["id"], "content": m["content"], "created_at": _fmt(m["at"]), "user": m["user"]}
            for m in agent.mems
        ]
        agents.append({"key": key, "memories": memories, "questions": out_q})
    return {"name": NAME, "agents": agents}, changes


def generate(seed: int = 0) -> dict:
    return generate_with_changes(seed)[0]


def stats(data: dict) -> dict:
    qs = [q for a in data["agents"] for q in a["questions"]]
    by_kind = {k: sum(q["kind"] == k for q in qs) for k in SHARES}
    return {
        "name": data["name"],
        "agents": len(data["agents"]),
        "memories": sum(len(a["memories"]) for a in data["agents"]),
        "questions": len(qs),
        "by_kind": by_kind,
        "evidence_per_question": round(sum(len(q["evidence"]) for q in qs) / max(len(qs), 1), 3),
        "users": sum(len({m["user"] for m in a["memories"]}) for a in data["agents"]),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.conversations.support_desk", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stats", action="store_true", help="print the set's statistics")
    parser.add_argument("--out", help="write the set as JSON to this file")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=1)
    if args.stats or not args.out:
        print(json.dumps(stats(data), indent=2))


if __name__ == "__main__":
    main()
