"""Writing constraints for memories saved through the agent API (spec 003 §9).

Content is normalised first (Unicode NFC, control and zero-width characters removed, whitespace
collapsed), then checked against the generic rules and the rules of its memory type. A violation
raises `WritingRuleViolation` (a 422) naming the rule, e.g. `semantic.max_length`; the message
describes the rule and never quotes the text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .errors import ValidationFailed
from .memory import MAX_CONTENT_CHARS


class WritingRuleViolation(ValidationFailed):
    code = "writing_rule"


@dataclass(frozen=True)
class TextRules:
    max_chars: int = MAX_CONTENT_CHARS
    max_sentences: int | None = None
    third_person: bool = False
    numbered_steps: bool = False
    single_line: bool = False


# Semantic: "complete, self-contained, third-person summary with no pronouns; 1-2 sentences; <=280 chars".
# Episodic: "1-2 sentences; what was discussed/decided/done". Insight (ToM): third person, <=280 chars.
# Procedural (spec 003 §12): numbered steps. Core and journal keep the generic limits.
TYPE_RULES: dict[str, TextRules] = {
    "semantic": TextRules(max_chars=280, max_sentences=2, third_person=True, single_line=True),
    "episodic": TextRules(max_chars=500, max_sentences=2, single_line=True),
    "insight": TextRules(max_chars=280, max_sentences=3, third_person=True, single_line=True),
    "procedural": TextRules(max_chars=2000, numbered_steps=True),
    "core": TextRules(),
    "journal": TextRules(),
}

# First- and second-person pronouns: a memory is written about the user, not from anyone's voice.
_PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves".split()
)
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_ABBREVIATIONS = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|approx|No)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_STEP = re.compile(r"^\d{1,3}[.)]\s+\S")


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
    if rules.numbered_steps:
        steps = [line for line in text.splitlines() if line.strip()]
        if not all(_STEP.match(line) for line in steps):
            raise _violation(
                f"{memory_type}.numbered_steps",
                "procedural memories are numbered steps, one per line ('1. ...')",
            )
    return text
