"""A question's int8 path, recorded once it is checked, so that a later process embeds questions without
PyTorch.

LocalMiniLM takes the int8 export for a question only where it embeds LocalMiniLM.CHECKS as the model does
(QUESTION_AGREEMENT), and that check needs the model: PyTorch, sentence-transformers and the weights, about
535 MB of resident memory and 5 s to load (docs/benchmarks.md, "A web process's questions"). A web process embeds nothing but questions. So once a process
has kept the int8 path, it writes what the check used beside the export: the tokenizer as it was set up, the
model's vectors of the check texts, the export's hash and ONNX Runtime's version (`write`). A later process
reads that record, loads the export and the tokenizer alone, and runs the same check against the recorded
vectors — the same texts, the same bound — before it answers a question that way (`load`). Where anything
differs (another export, another ONNX Runtime, other check texts, a record half-written or altered, a check
missed) the record is not used, and the process takes the model's way, which writes it anew.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

VERSION = 1  # the record's format
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
Runner = Callable[[str], np.ndarray]  # one text -> its normalised vector, shape (1, dims)
Tokens = Callable[[str], dict[str, np.ndarray]]  # one text -> the model's inputs, int64, in INPUTS order


def record_path(export: Path) -> Path:
    return export.with_suffix(".question.json")


def write(export: Path, tokenizer: Any, checks: dict[str, np.ndarray]) -> None:
    """Record that `export`, fed by `tokenizer` (a `tokenizers.Tokenizer`), was checked on `checks`' texts
    against the model's vectors given; written to a temporary file and renamed, so that no process reads
    half a record."""
    import onnxruntime

    record = {
        "version": VERSION,
        "export": export.name,
        "export_sha256": _digest(export),
        "onnxruntime": onnxruntime.__version__,
        "tokenizer": tokenizer.to_str(),
        "checks": [[text, [float(x) for x in np.ravel(vector)]] for text, vector in checks.items()],
    }
    target = record_path(export)
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    partial.write_text(json.dumps(record))
    os.replace(partial, target)


def load(
    export: Path, texts: Sequence[str], least: float, build: Callable[[Path, Tokens], Runner]
) -> Runner | None:
    """The recorded question path of `export`, where a record of this export, this ONNX Runtime and these
    check `texts` exists and the export, run by `build` (path, tokens -> a runner) with the recorded
    tokenizer, embeds each text at a cosine of `least` or more from the model's recorded vector; else None."""
    path = record_path(export)
    if not (path.exists() and export.exists()):
        return None
    import onnxruntime
    from tokenizers import Tokenizer

    record = json.loads(path.read_text())
    if (
        record.get("version") != VERSION
        or record.get("onnxruntime") != onnxruntime.__version__
        or [text for text, _ in record["checks"]] != list(texts)
        or record.get("export_sha256") != _digest(export)
    ):
        return None
    run = build(export, encoder(Tokenizer.from_str(record["tokenizer"])))
    for text, vector in record["checks"]:
        if float(run(text)[0] @ np.asarray(vector, dtype=np.float32)) < least:
            return None
    return run


def encoder(tokenizer: Any) -> Tokens:
    """One text -> the model's inputs as int64 arrays in INPUTS order, through `tokenizer` as set up."""

    def encode(text: str) -> dict[str, np.ndarray]:
        encoding = tokenizer.encode(text)
        return {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }

    return encode


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
