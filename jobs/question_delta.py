"""The question's side of the local model: all-MiniLM-L6-v2 with a low-rank delta, tuned to find memories.

memory.query embeds a question and compares it with the stored vectors, which are the model's own. The
model was trained to match sentences with sentences; a question asked of a memory store ("When is the
plumber coming back?") is worded unlike the note that answers it ("Nadia rebooked the plumber for the
14th"). The delta moves only the question's vector toward its notes: every stored vector stays the model's
own, so nothing is re-embedded, and a question embedded without it (the hashed fallback, or the model's
own path where the int8 export is not kept: jobs/local_embedder.py) still ranks the same vectors.

The delta is LoRA (low-rank adaptation): for each of the transformer's linear layers named in the file, two
small matrices A (rank × inputs) and B (outputs × rank) whose product, scaled, is added to the layer's
weights (`merged`). It was trained by bench/question_tuning.py on the development conversational sets only
(docs/benchmarks.md, "The question's side tuned"), about 0.7 MB in float16; the model is
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0 (jobs/data/NOTICE).
"""

from __future__ import annotations

import copy
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

SHIPPED = Path(__file__).resolve().parent / "data" / "question_lora.npz"
SCALE = "scale"  # the npz entry holding the factor each B·A is scaled by (LoRA's alpha / rank)


@lru_cache(maxsize=4)  # read once per process: it names the question's export (jobs/onnx_export.py)
def digest(path: Path) -> str:
    """A short hash of the delta file: the question's export is cached under it, so a new delta makes a new
    export."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def save(path: Path, factors: dict[str, tuple[np.ndarray, np.ndarray]], scale: float) -> None:
    """Write `factors` (layer name -> (A, B)) and `scale` as a delta file, the factors in float16."""
    arrays: dict[str, Any] = {SCALE: np.array(scale, dtype=np.float32)}
    for name, (a, b) in factors.items():
        arrays[f"{name}.A"] = np.asarray(a, dtype=np.float16)
        arrays[f"{name}.B"] = np.asarray(b, dtype=np.float16)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        np.savez_compressed(out, **arrays)


def load(path: Path) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], float]:
    """The factors (layer name -> (A, B), float32) and the scale of a delta file."""
    with np.load(path) as arrays:
        names = sorted(key[: -len(".A")] for key in arrays.files if key.endswith(".A"))
        factors = {
            name: (arrays[f"{name}.A"].astype(np.float32), arrays[f"{name}.B"].astype(np.float32))
            for name in names
        }
        return factors, float(arrays[SCALE])


def merged(model: Any, path: Path) -> Any:
    """A copy of the sentence-transformers `model` whose transformer's named linear layers carry the delta:
    W + scale · B·A. ValueError where a layer is missing or a factor's shape does not fit its layer (a delta
    made for another model), before anything is changed; the model itself is never changed."""
    import torch

    factors, scale = load(path)
    tuned = copy.deepcopy(model)
    transformer = tuned[0].auto_model
    layers = dict(transformer.named_modules())
    for name, (a, b) in factors.items():
        layer = layers.get(name)
        if layer is None or tuple(layer.weight.shape) != (b.shape[0], a.shape[1]) or a.shape[0] != b.shape[1]:
            raise ValueError(f"the question's delta does not fit this model (layer {name})")
    with torch.no_grad():
        for name, (a, b) in factors.items():
            weight = layers[name].weight
            weight += torch.from_numpy(scale * (b @ a)).to(weight.dtype)
    return tuned.eval()
