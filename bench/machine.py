"""How fast this machine runs Python right now: one figure to set beside a benchmark's.

The machine these benchmarks run on is a shared virtual one whose speed drifts, by a quarter within
minutes and by half between days (bench/results/retrieval_notes.section.md) — more than most changes to the
code move a figure. A throughput or latency figure without the machine's speed next to it cannot be
compared with another; so the scripts whose goals sit near the edge (bench/api_load.py,
bench/nl_latency.py) time this probe next to their rounds and write it into their JSON, and the
rendered tables show it.

The probe is the loop earlier sessions timed by hand to tell the machines apart: ten million iterations
of a list comprehension, the best of a few runs (the best, since nothing makes a loop faster than the
machine allows, while a neighbour's burst makes one run slower). Lower is faster: 0.15 s on the fastest
machine seen, 0.30 s on the slowest.
"""

from __future__ import annotations

import platform
import time
from importlib import metadata
from pathlib import Path

ITERATIONS = 10_000_000


def loop_seconds(runs: int = 3) -> float:
    """The best of `runs` timings of the probe loop, in seconds (three decimals)."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        [0 for _ in range(ITERATIONS)]
        best = min(best, time.perf_counter() - started)
    return round(best, 3)


def _cpuinfo(field: str) -> str | None:
    """The first value of `field` in Linux's /proc/cpuinfo, or None (another system, or no such field)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The processor's model name as Linux reports it ("AMD EPYC"), else the architecture: machines of
    the same cores and Python ran the two systems of bench/conversational.py at different ratios."""
    return _cpuinfo("model name") or platform.machine()


# What the processor offers int8 arithmetic: ONNX Runtime's int8 kernels use the dot-product
# instructions where the CPU has them (AVX-512 VNNI, AVX-VNNI, AMX), AVX2's slower sequence elsewhere, so an
# int8 question's time, and its ratio to a float32 model's, differs between processors.
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


def int8_flags() -> list[str]:
    """Which of INT8_FLAGS the processor reports (Linux's /proc/cpuinfo); none known elsewhere."""
    flags = (_cpuinfo("flags") or "").split()
    return [flag for flag in INT8_FLAGS if flag in flags]


def packages(*names: str) -> dict[str, str]:
    """The installed version of each distribution named, or "absent": a venv built another day can embed a
    question differently (the int8 export is made by the installed onnx and ONNX Runtime)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


if __name__ == "__main__":
    print(f"{ITERATIONS:,}-iteration Python loop: {loop_seconds()} s (best of 3)")
