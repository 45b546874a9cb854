"""The dense step past EXACT_ROWS (models/retrieval/vectors.py): sign bits pick a shortlist, re-scored exactly.

What the shortlist misses on real embeddings is a benchmark's question (bench.vector_recall); these tests
hold what must never change: the prefilter path is taken, finds what exact search finds on vectors with
structure, sees rewritten rows, bounds its work, and ranks the filtered user's rows only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from models.retrieval import vectors

STAMP = datetime(2026, 1, 1)
DIMS = 384  # all-MiniLM-L6-v2's width: six 64-bit words of signs


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def clustered(count: int, clusters: int, seed: int = 1) -> np.ndarray:
    """Vectors around a few centres, as embeddings of related texts are: the exact nearest are clear."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIMS))
    return unit(centres[rng.integers(0, clusters, count)] + 0.6 * rng.standard_normal((count, DIMS)))


def filled(
    matrix: np.ndarray, users: list[str | None] | None = None, first_id: int = 1
) -> vectors.AgentMatrix:
    entry = vectors.AgentMatrix(agent_id=1, model="test")
    upsert(entry, matrix, users, first_id)
    return entry


def upsert(entry, matrix, users=None, first_id: int = 1) -> None:
    users = users or [None] * len(matrix)
    entry._upsert(
        [
            (first_id + i, row.tobytes(), STAMP, user)
            for i, (row, user) in enumerate(zip(matrix, users, strict=True))
        ]
    )


def exact(matrix: np.ndarray, query: np.ndarray, k: int, first_id: int = 1) -> list[int]:
    return [int(i) + first_id for i in np.argsort(-(matrix @ query), kind="stable")[:k]]


@pytest.fixture
def small_limits(monkeypatch):
    """The prefilter past 300 rows, a shortlist of 100: the same code as at 100,000, on test-sized data."""
    monkeypatch.setattr(vectors, "EXACT_ROWS", 300)
    monkeypatch.setattr(vectors, "SHORTLIST", 100)
    monkeypatch.setattr(vectors, "SHORTLIST_PER_K", 5)
    calls = []
    real = vectors.shortlist

    def counted(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(vectors, "shortlist", counted)
    return calls


def test_sign_bits_pack_one_bit_a_dimension_into_64_bit_words():
    vector = np.full(70, -1.0, dtype=np.float32)
    vector[[0, 65]] = 1.0
    bits = vectors.sign_bits(vector)
    assert bits.shape == (1, 2) and bits.dtype == np.uint64  # 70 dimensions: two words, the last padded
    assert [int(np.bitwise_count(w)) for w in bits[0]] == [1, 1]
    assert vectors.sign_bits(np.stack([vector, -vector])).shape == (2, 2)


def test_past_exact_rows_the_prefilter_finds_what_exact_search_finds(small_limits):
    matrix = clustered(3000, clusters=40)
    entry = filled(matrix)
    rng = np.random.default_rng(7)
    queries = unit(
        matrix[rng.integers(0, 3000, 40)] + 0.03 * rng.standard_normal((40, DIMS))
    )  # near a memory
    found = []
    for query in queries:
        ids, scores = entry.nearest(query, 10)
        want = exact(matrix, query, 10)
        assert ids[0] == want[0]  # the nearest of all is never lost
        assert np.all(np.diff(scores) <= 0) and scores[0] == pytest.approx(float(matrix[want[0] - 1] @ query))
        found.append(len(set(ids.tolist()) & set(want)) / 10)
    assert small_limits and set(small_limits) == {100}  # the prefilter ran, with its shortlist
    assert np.mean(found) >= 0.95


def test_up_to_exact_rows_every_row_is_scored(small_limits):
    matrix = clustered(300, clusters=5)
    entry = filled(matrix)
    query = matrix[17]
    assert entry.nearest(query, 300)[0].tolist() == exact(matrix, query, 300)
    assert small_limits == []


def test_a_rewritten_row_is_found_by_its_new_signs(small_limits):
    matrix = clustered(1000, clusters=10)
    entry = filled(matrix)
    query = unit(np.random.default_rng(3).standard_normal(DIMS))
    upsert(entry, (-query)[None, :], first_id=500)  # memory 500 now points away from the query
    assert 500 not in entry.nearest(query, 10)[0]
    upsert(entry, query[None, :], first_id=500)  # rewritten: the query itself
    upsert(entry, clustered(600, clusters=10, seed=2), first_id=2000)  # and the arrays grow after it
    ids, scores = entry.nearest(query, 10)
    assert ids[0] == 500 and scores[0] == pytest.approx(1.0, abs=1e-5)
    assert len(small_limits) == 2


def test_the_shortlist_holds_every_row_within_its_cut_and_bounds_ties():
    rng = np.random.default_rng(5)
    matrix = unit(rng.standard_normal((500, DIMS)))
    bits = vectors.sign_bits(matrix).T
    query = vectors.sign_bits(matrix[0])[0]
    distance = np.array(
        [sum(int(np.bitwise_count(a ^ b)) for a, b in zip(col, query, strict=True)) for col in bits.T]
    )
    picked = vectors.shortlist(np.ascontiguousarray(bits), query, 50)
    assert len(picked) >= 50 and 0 in picked
    assert distance[picked].max() < distance[np.setdiff1d(np.arange(500), picked)].min()
    same = np.ascontiguousarray(vectors.sign_bits(np.repeat(matrix[:1], 400, axis=0)).T)
    assert len(vectors.shortlist(same, query, 50)) == 50  # all tied: the re-score stays bounded


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 384), min_size=1, max_size=1000),
    st.integers(1, 400),
    st.integers(0, 384),
    st.integers(0, 300),
)
@example([300] * 1000, 5, 0, 5)  # five rows far nearer than every sampled one: counted in full
@example([7] * 50, 20, 7, 0)  # every distance the same
def test_the_shortlists_cut_is_the_size_th_smallest_distance(values, size, outlier, spread):
    """`nearest_distance` guesses the cut from a sample of the distances and confirms it by counting: it
    must be exactly the size-th smallest, also where the sample misleads (a few rows far nearer than the
    rest, here `outlier`, or distances crowded on one value)."""
    distance = np.array(values + [outlier] * (spread % 7) + [values[0]] * spread, dtype=np.uint16)
    size = min(size, len(distance))
    assert vectors.nearest_distance(distance, size) == int(np.sort(distance)[size - 1])


@pytest.mark.parametrize("blocks", [0.5, 2, 2.01, 3.5, 8, 8.01], ids=lambda b: f"{b}-blocks")
def test_rows_scored_in_blocks_score_bit_for_bit_as_one_copy_of_them_all(blocks):
    """A shortlist's rows are copied out and scored GATHER_ROWS at a time (`gathered_scores`): the very
    scores of one copy of them all, whatever is left for the last block (here one row, or half a block)."""
    count = int(blocks * vectors.GATHER_ROWS) or 1
    matrix = clustered(4 * count, clusters=20)
    rows = np.sort(np.random.default_rng(count).choice(len(matrix), count, replace=False))
    for query in matrix[[0, 1, 2]]:
        assert np.array_equal(vectors.gathered_scores(matrix, rows, query), matrix[rows] @ query)


def test_the_prefilter_ranks_the_filtered_users_rows_only(small_limits):
    matrix = clustered(2000, clusters=20)
    users = ["u1" if i % 4 else "u2" for i in range(2000)]
    entry = filled(matrix, users)
    u2 = {i + 1 for i, user in enumerate(users) if user == "u2"}  # 500 rows: past EXACT_ROWS too
    for query in matrix[[1, 2, 3, 5]]:  # u1's own vectors: u1's rows would be nearest
        ids = entry.nearest(query, 20, user_id="u2")[0]
        assert len(ids) == 20 and set(ids.tolist()) <= u2
    assert small_limits  # through the prefilter
    assert entry.nearest(matrix[0], 5, user_id="nobody")[0].size == 0


@pytest.mark.parametrize("share", [1, 2, 5], ids=["every-row", "half", "a-fifth"])
def test_a_users_nearest_are_exact_whether_it_holds_every_row_many_or_few(small_limits, share):
    """Under EXACT_ROWS: every row scored and the user's taken out (every row, or a share of at least
    1/SCAN_SHARE), or the user's rows copied out and scored (a smaller share): the same ranking as a
    brute-force search over the user's rows alone."""
    matrix = clustered(300, clusters=5)
    users = ["u1" if i % share == 0 else "u2" for i in range(300)]
    entry = filled(matrix, users)
    theirs = np.array([i for i, user in enumerate(users) if user == "u1"])
    for query in matrix[[3, 4, 7]]:
        expected = [int(theirs[i]) + 1 for i in np.argsort(-(matrix[theirs] @ query), kind="stable")[:20]]
        ids, scores = entry.nearest(query, 20, user_id="u1")
        assert ids.tolist() == expected
        assert scores.tolist() == pytest.approx(sorted((matrix[theirs] @ query).tolist(), reverse=True)[:20])
    assert small_limits == []


def test_a_process_answering_dense_queries_runs_numpys_blas_on_one_thread(app):
    """BLAS's own thread pool beside torch's stalled query embeddings on two cores (vectors._one_blas_thread).
    NumPy's BLAS is the one its products run on: the library a process importing only NumPy loads (SciPy,
    which the local embedder's packages import, brings a BLAS of its own that the dense path never calls)."""
    from threadpoolctl import threadpool_info

    found = subprocess.run(
        [sys.executable, "-c", "import json, numpy, threadpoolctl;"
         "print(json.dumps([p['filepath'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas']))"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    numpys = set(json.loads(found.stdout))
    vectors.cache()
    blas = [pool for pool in threadpool_info() if pool["filepath"] in numpys]
    assert numpys and blas and all(pool["num_threads"] == 1 for pool in blas)
