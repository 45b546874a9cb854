"""An export's check against the model, recorded once it passes, so that a later process uses the export
without PyTorch.

LocalMiniLM embeds with an ONNX export of the model (jobs/onnx_export.py) only where the export embeds
LocalMiniLM.CHECKS as the model does: the float32 export every text to store, to a cosine of
ONNX_AGREEMENT, and the int8 export questions, to QUESTION_AGREEMENT. That check needs the model: PyTorch,
sentence-transformers and the weights, about 535 MB of resident memory and 5-10 s to load (docs/benchmarks.md,
"The local embedder in a process"). A web process embeds nothing but questions, and a worker, once the exports
are checked, nothing the exports cannot. So once a process has kept an export, it writes what the check
used beside the export: the tokenizer as it was set up, the model's vectors of the check texts, the
export's hash and ONNX Runtime's version (`write`). A later process reads that record (`read`), loads the
export and the tokenizer alone, and runs the same check against the recorded vectors — the same texts, the
same bound — before it embeds anything that way. Where anything differs (another export, another ONNX
Runtime, other check texts, a record half-written or altered, a check missed) the record is not used, and
the process takes the model's way, which writes it anew.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

VERSION = 1  # the record's format


class Recorded(NamedTuple):
    """A record that matches its export: the tokenizer as set up, and the model's vector of each check
    text, shape (1, dims)."""

    tokenizer: Any
    vectors: dict[str, np.ndarray]


def record_path(export: Path) -> Path:
    return export.with_suffix(".record.json")


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


def read(export: Path, texts: Sequence[str]) -> Recorded | None:
    """The record of `export`, where one exists for this export (its hash), this ONNX Runtime and these
    check `texts`; else None. The caller still runs the check against its vectors."""
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
    vectors = {text: np.asarray([vector], dtype=np.float32) for text, vector in record["checks"]}
    return Recorded(Tokenizer.from_str(record["tokenizer"]), vectors)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
