"""bench/api_load.py's CpuMeter: the CPU a round took is put on the server's processes — the one it was
given and its children — not on the clients or the rest of the machine (docs/benchmarks.md, "Read
throughput")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from bench.api_load import CpuMeter

# A server stand-in: the process and a child it forks, each burning BURN seconds of CPU once `go` exists,
# then each writing a file of its own and waiting to be killed (the meter reads them while they live).
SERVER = """
import os, sys, time
folder, burn = sys.argv[1], float(sys.argv[2])
child = os.fork()
name = "child" if child == 0 else "parent"
if child:
    print("ready", flush=True)
while not os.path.exists(os.path.join(folder, "go")):
    time.sleep(0.01)
start = time.process_time()
while time.process_time() - start < burn:
    pass
open(os.path.join(folder, name), "w").close()
time.sleep(60)
"""
BURN = 0.3


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="CpuMeter reads Linux's /proc")
def test_cpu_meter_puts_the_server_and_its_children_cpu_on_the_server(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tmp_path), str(BURN)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: both processes are killed at the end
    )
    try:
        assert server.stdout.readline().strip() == "ready"
        meter = CpuMeter.of(server.pid)
        assert meter is not None and len(meter.server) == 2  # the process and its child
        meter.start()
        (tmp_path / "go").touch()
        deadline = time.monotonic() + 30
        while not ((tmp_path / "parent").exists() and (tmp_path / "child").exists()):
            assert time.monotonic() < deadline, "the stand-in server never finished burning"
            time.sleep(0.01)
        used = meter.stop(requests=2)
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        server.stdout.close()
    assert used is not None
    # Two processes burnt BURN s each over two requests: BURN s of server CPU a request (a clock tick of
    # slack each), and almost none in this process, whose CPU is the clients'.
    assert used["server_ms"] >= 1000 * BURN - 20
    assert used["client_ms"] < 1000 * BURN / 2
    assert used["rest_ms"] >= 0 and 0 <= used["idle_pct"] <= 100
    assert CpuMeter.of(None) is None
