"""The memory maps of the processes a test started, found by a marker in their environment: which shared
libraries (libtorch, ONNX Runtime) a server or a worker loaded.

A helper module, not a test module.
"""

from __future__ import annotations

import os


def mapped(marker: str) -> dict[int, str]:
    """The memory maps of every process whose environment holds `marker`, by pid."""
    maps = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if marker.encode() not in environ.read():
                        continue
                with open(f"/proc/{entry}/maps") as found:
                    maps[int(entry)] = found.read()
            except OSError:  # gone, or not ours
                continue
    return maps
