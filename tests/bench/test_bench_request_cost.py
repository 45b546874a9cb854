"""bench/request_cost.py: a request's instructions are the difference of two callgrind runs that measured
a known number of questions apart, read from each output file's summary line
(bench/results/retrieval_notes.section.md, "Instructions, not seconds")."""

from __future__ import annotations

import os
import sys

import pytest

from bench.request_cost import _ticks, instructions, main, per_request

# The head of a callgrind output file as valgrind 3.19 writes it (--dump-instr=no).
CALLGRIND_HEAD = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  /usr/bin/python3 -m bench.request_cost --drive
part: 1

desc: I1 cache:
events: Ir
summary: 12508838275


totals: 12508838275
"""


def test_the_instruction_count_is_read_from_the_summary_line():
    assert instructions(CALLGRIND_HEAD) == 12_508_838_275


def test_a_file_without_a_summary_line_is_refused():
    with pytest.raises(ValueError, match="summary"):
        instructions("events: Ir\ntotals: 5\n")


def test_a_request_costs_the_difference_over_the_requests_between_the_runs():
    assert per_request(11_777_974_047, 12_508_838_275, 100) == pytest.approx(7_308_642.28)


@pytest.mark.parametrize(("fewer", "more", "requests"), [(10, 10, 5), (20, 10, 5), (10, 20, 0)])
def test_runs_that_do_not_measure_more_requests_are_refused(fewer, more, requests):
    with pytest.raises(ValueError):
        per_request(fewer, more, requests)


def test_counted_questions_must_be_warm_ones():
    with pytest.raises(SystemExit, match="at most --warm"):
        main(["--warm", "10", "--requests", "20", "--no-valgrind"])


def test_the_database_it_drops_must_be_a_benchmark_one():
    with pytest.raises(SystemExit, match="memconsole_api_load"):
        main(["--db-name", "memconsole", "--no-valgrind"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_cpu_of_processes_is_found_by_their_name():
    # This process has run the whole test session so far: some ticks of CPU at least.
    with open(f"/proc/{os.getpid()}/stat") as fh:
        stat = fh.read()
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    assert _ticks((name,)) >= 1
    assert _ticks(("no-such-process-name-here",)) == 0
