"""How the context block writes one memory (models/retrieval/context_layout.py): the JSON object written
directly is the one `json.dumps` writes of the documented fields, byte for byte, whatever the memory holds."""

from __future__ import annotations

import json
from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from models.retrieval import context_layout as layout
from models.retrieval.context import Entry

# Any text a memory, a tag or a category could hold: quotes, backslashes, control characters, line and
# paragraph separators, astral characters (JSON escapes only some of them).
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)

entries = st.builds(
    Entry,
    id=st.integers(1, 2**63 - 1),
    memory_type=st.sampled_from(["core", "journal", "semantic", "episodic", 'odd "type"\\']),
    created_at=st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31)),
    tokens=st.integers(0, 10**9),
    tags=st.lists(TEXT, max_size=4),
    category=st.none() | TEXT,
    constitutional=st.booleans(),
    sig=st.integers(-(2**63), 2**63 - 1),
    content=st.none() | TEXT,
)


@given(entries)
def test_a_memorys_json_object_is_what_json_dumps_writes_of_its_fields(entry):
    assert layout.fragment(entry, text=False) == json.dumps(layout.memory_json(entry), ensure_ascii=False)
