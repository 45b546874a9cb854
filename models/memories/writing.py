"""Writing constraints for memories saved through the agent API (docs/spec/003-memory-system.md §9).

Content is normalised first (Unicode NFC, control and zero-width characters removed, whitespace
collapsed), then checked against the generic rules and the rules of its memory type. A violation
raises `WritingRuleViolation` (a 422) naming the rule, e.g. `semantic.max_length`; the message
describes the rule and never quotes the text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from models.errors import ValidationFailed
from models.memories.memory import MAX_CONTENT_CHARS


class WritingRuleViolation(ValidationFailed):
    code = "writing_rule"


@dataclass(frozen=True)
class TextRules:
    max_chars: int = MAX_CONTENT_CHARS
    max_sentences: int | None = None
    third_person: bool = False
    numbered_steps: bool = False
    single_line: bool = False
    past_tense: bool = False


# Semantic: "complete, self-contained, third-person summary with no pronouns; 1-2 sentences; <=280 chars".
# Episodic: "past tense; 1-2 sentences; what was discussed/decided/done". Insight (ToM): third person,
# <=280 chars. Procedural (docs/spec/003-memory-system.md §12): numbered steps. Core and journal keep the generic limits.
TYPE_RULES: dict[str, TextRules] = {
    "semantic": TextRules(max_chars=280, max_sentences=2, third_person=True, single_line=True),
    "episodic": TextRules(max_chars=500, max_sentences=2, single_line=True, past_tense=True),
    "insight": TextRules(max_chars=280, max_sentences=3, third_person=True, single_line=True),
    "procedural": TextRules(max_chars=2000, numbered_steps=True),
    "core": TextRules(),
    "journal": TextRules(),
}

# First- and second-person pronouns: a memory is written about the user, not from anyone's voice.
_PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves".split()
)
# Third-person pronouns a self-contained memory cannot open with: "She prefers tea" names no one.
_OPENING_PRONOUNS = frozenset("he she they it him her them his hers their theirs its".split())
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_ABBREVIATIONS = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|approx|No)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_STEP = re.compile(r"^\d{1,3}[.)]\s+\S")
_TITLE = re.compile(r"^[^\n]{1,200}:$")  # a procedure may open with one title line ("Deploy the API:")
# Past tense, by form: a regular -ed verb or a common irregular past; words that only look like one
# (need, speed, hundred) do not count.
_REGULAR_PAST = re.compile(r"^[a-z]{2,}ed$")
_NOT_PAST = frozenset(
    "need feed seed speed bleed breed deed heed weed greed indeed steed shred sled bred hundred sacred naked "
    "wicked kindred rugged ragged embed".split()
)
_IRREGULAR_PAST = frozenset(
    "was were had did said went made took came saw gave told found thought became left felt brought began "
    "kept held wrote stood heard let meant set met ran paid sat spoke lay led read grew lost fell sent built "
    "understood drew broke spent cut rose drove bought wore chose got knew put won ate drank sang swam flew "
    "threw forgot forgave hid hit hurt sold shut slept sought taught caught fought struck woke rang shook "
    "bit fed fled lent lit quit rode sank sprang stole stuck swore tore wept wound".split()
)


def guidance(memory_type: str) -> str:
    """The writing rules of a type as a prompt states them, derived from `TYPE_RULES`, so every prompt that
    asks a model for memories (extraction, theory-of-mind insights) says exactly what the validator checks."""
    rules = TYPE_RULES.get(memory_type, TextRules())
    parts = [f"Each {memory_type} memory is at most {rules.max_chars:,} characters"]
    if rules.max_sentences:
        parts.append(f"at most {rules.max_sentences} sentence{'s' if rules.max_sentences > 1 else ''}")
    if rules.single_line:
        parts.append("on one line")
    text = ", ".join(parts) + "."
    if rules.third_person:
        text += (
            " Write it in the third person about the user, complete and self-contained: no I, me, we or you,"
            " and name who it is about instead of opening with he, she, they or it."
        )
    if rules.past_tense:
        text += " Say what was discussed, decided or done, in the past tense."
    if rules.numbered_steps:
        text += " Write numbered steps, one per line ('1. ...'), after an optional title line."
    return text


def normalise(text: str, *, single_line: bool = False) -> str:
    """NFC, no control or zero-width characters, spaces collapsed; newlines kept unless single_line."""
    text = unicodedata.normalize("NFC", text).translate(_ZERO_WIDTH)
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs"))
    if single_line:
        return " ".join(text.split())
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def count_sentences(text: str) -> int:
    body = _ABBREVIATIONS.sub("", text)
    body = re.sub(r"(?<=\d)\.(?=\d)", "", body)  # decimals and versions: 1.5, v2.3
    return max(1, len(_SENTENCE_END.findall(body)))


def is_past_tense(text: str) -> bool:
    """At least one past-tense verb form (a heuristic by form: "Maya shipped", "Ana met Bo"); text only in
    the present or future ("Maya is shipping", "Maya will ship") fails."""
    words = re.findall(r"[a-z]+", text.lower())
    return any(w in _IRREGULAR_PAST or (w not in _NOT_PAST and _REGULAR_PAST.match(w)) for w in words)


def _violation(rule: str, message: str) -> WritingRuleViolation:
    return WritingRuleViolation(message, field="content", rule=rule)


def check_content(memory_type: str, content: str) -> str:
    """The normalised content, or a WritingRuleViolation naming the first rule it breaks."""
    rules = TYPE_RULES.get(memory_type, TextRules())
    text = normalise(content, single_line=rules.single_line)
    if not text:
        raise _violation("empty_after_normalisation", "content is empty after normalisation")
    if len(text) > rules.max_chars:
        raise _violation(
            f"{memory_type}.max_length",
            f"{memory_type} memories are at most {rules.max_chars:,} characters; this one has {len(text):,}",
        )
    if rules.max_sentences and count_sentences(text) > rules.max_sentences:
        raise _violation(
            f"{memory_type}.max_sentences",
            f"{memory_type} memories are at most {rules.max_sentences} sentences",
        )
    if rules.third_person:
        words = re.findall(r"[^\W\d_]+", text)
        if any(w.lower() in _PRONOUNS and w != "US" for w in words):
            raise _violation(
                f"{memory_type}.third_person",
                f"{memory_type} memories are written in the third person, without I/me/we/you pronouns",
            )
        if words and words[0].lower() in _OPENING_PRONOUNS:
            raise _violation(
                f"{memory_type}.self_contained",
                f"{memory_type} memories are self-contained: name who they are about instead of opening with "
                "he, she, they or it",
            )
    if rules.past_tense and not is_past_tense(text):
        raise _violation(
            f"{memory_type}.past_tense",
            f"{memory_type} memories say what was discussed, decided or done, in the past tense",
        )
    if rules.numbered_steps:
        steps = [line for line in text.splitlines() if line.strip()]
        if steps and _TITLE.match(steps[0]) and len(steps) > 1:
            steps = steps[1:]
        if not all(_STEP.match(line) for line in steps):
            raise _violation(
                f"{memory_type}.numbered_steps",
                "procedural memories are numbered steps, one per line ('1. ...')",
            )
    return text
