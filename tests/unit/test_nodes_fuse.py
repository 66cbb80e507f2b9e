"""Fusion functions (RRF, convex, union-max, MMR) and the fuse node, as hand-computed tables."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fuse import fuse
from ragloom.nodes.fusion_math import (
    convex,
    dedup,
    minmax,
    mmr,
    rrf,
    sibling_evidence,
    union_max,
)
from ragloom.settings import RagSettings
from ragloom.state import Chunk, ScoredChunk


def sc(cid: str, score: float = 0.0, origin: str = "vector") -> ScoredChunk:
    """A scored chunk whose text is its id."""
    chunk = Chunk(id=cid, source_id=f"{cid}.md", doc_id=cid, text=cid, start=0, end=len(cid))
    return ScoredChunk(chunk=chunk, score=score, score_origin=origin)


def ranking(chunks: list[ScoredChunk]) -> list[tuple[str, float]]:
    """(id, rounded score) pairs."""
    return [(s.chunk.id, round(s.score, 6)) for s in chunks]


def test_rrf_hand_computed() -> None:
    fused = rrf([[sc("a"), sc("b"), sc("c")], [sc("b"), sc("d")]], k=60)
    assert ranking(fused) == [
        ("b", round(1 / 62 + 1 / 61, 6)),
        ("a", round(1 / 61, 6)),
        ("d", round(1 / 62, 6)),
        ("c", round(1 / 63, 6)),
    ]
    assert {s.score_origin for s in fused} == {"rrf"}


def test_rrf_small_k_ties_keep_first_seen_order_and_limit() -> None:
    fused = rrf([[sc("a"), sc("b")], [sc("b"), sc("a")]], k=1, limit=1)
    assert ranking(fused) == [("a", round(1 / 2 + 1 / 3, 6))]


def test_rrf_counts_a_duplicate_within_one_list_once() -> None:
    fused = rrf([[sc("a"), sc("a"), sc("b")]], k=10)
    assert ranking(fused) == [("a", round(1 / 11, 6)), ("b", round(1 / 12, 6))]


@pytest.mark.parametrize(
    ("weight", "expected"),
    [
        # dense a=1.0, b=0.5, c=0.0 (min-max of 0.9, 0.6, 0.3); bm25 b=1.0, d=0.0 (of 8, 2)
        (0.0, [("a", 1.0), ("b", 0.5), ("c", 0.0), ("d", 0.0)]),
        (0.4, [("b", 0.7), ("a", 0.6), ("c", 0.0), ("d", 0.0)]),
        (1.0, [("b", 1.0), ("a", 0.0), ("c", 0.0), ("d", 0.0)]),
    ],
)
def test_convex_table(weight: float, expected: list[tuple[str, float]]) -> None:
    dense = [sc("a", 0.9), sc("b", 0.6), sc("c", 0.3)]
    sparse = [sc("b", 8.0, "bm25"), sc("d", 2.0, "bm25")]
    fused = convex(dense, sparse, weight)
    assert ranking(fused) == expected
    assert {s.score_origin for s in fused} == {"convex"}


def test_convex_constant_leg_counts_fully() -> None:
    fused = convex([sc("a", 0.5)], [], 0.4)
    assert ranking(fused) == [("a", 0.6)]


def test_union_max_keeps_best_score_per_chunk() -> None:
    merged = union_max([[sc("a", 0.5), sc("b", 0.4)], [sc("b", 0.9), sc("c", 0.1)]])
    assert ranking(merged) == [("b", 0.9), ("a", 0.5), ("c", 0.1)]


def test_dedup_keeps_first() -> None:
    assert ranking(dedup([sc("a", 1), sc("b", 2), sc("a", 3)])) == [("a", 1.0), ("b", 2.0)]


def test_minmax_maps_into_the_unit_interval() -> None:
    assert minmax([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert minmax([0.7, 0.7]) == [1.0, 1.0] and minmax([]) == []


def test_mmr_prefers_diverse_second_pick() -> None:
    query = np.array([1.0, 0.0, 0.0])
    embeddings = {
        "a": np.array([0.9, 0.436, 0.0]),  # relevance 0.9
        "a2": np.array([0.89, 0.456, 0.0]),  # near-duplicate of a
        "b": np.array([0.8, -0.6, 0.0]),  # relevance 0.8, far from a
    }
    candidates = [sc("a", 0.9), sc("a2", 0.89), sc("b", 0.7), sc("x", 0.5)]
    assert [s.chunk.id for s in mmr(query, candidates, embeddings, 0.5)] == ["a", "b", "a2", "x"]
    assert [s.chunk.id for s in mmr(query, candidates, embeddings, 1.0)] == ["a", "a2", "b", "x"]


class _Embedder:
    """Embeds every text to the same axis (the MMR query)."""

    def embed_array(self, texts: list[str]) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))


class _Index:
    """Only get_embeddings is needed by the fuse node."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = {k: np.array(v) for k, v in vectors.items()}

    def get_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        return {i: self.vectors[i] for i in ids if i in self.vectors}


def _deps(transform: str = "none", **retrieval: object) -> RagDeps:
    settings = RagSettings.model_validate(
        {"transform": {"name": transform}, "retrieval": {"candidate_k": 3, **retrieval}}
    )
    index = _Index({"a": [0.8, 0.6], "a2": [0.8, 0.61], "b": [0.8, -0.6]})
    return RagDeps(settings=settings, index=index, embedder=_Embedder())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("transform", "method", "ids"),
    [
        ("multi-query", "union-max", ["b", "a", "c"]),
        ("rag-fusion", "rrf", ["b", "a", "c"]),
    ],
)
def test_fuse_node_methods(transform: str, method: str, ids: list[str]) -> None:
    lists = [[sc("a", 0.5), sc("b", 0.4)], [sc("b", 0.9), sc("c", 0.1), sc("d", 0.05)]]
    update = fuse({"question": "q", "candidates": lists}, _deps(transform))
    assert [s.chunk.id for s in update["ranked"]] == ids
    (step,) = update["trace"]
    assert step.stage == "fuse" and step.detail["method"] == method and step.detail["fused"] == 3


def test_fuse_node_single_probe_passes_through_deduplicated() -> None:
    update = fuse(
        {"question": "q", "candidates": [[sc("a", 1), sc("a", 1), sc("b", 0.5)]]}, _deps()
    )
    assert [s.chunk.id for s in update["ranked"]] == ["a", "b"]
    assert update["trace"][0].detail["method"] == "pass-through"


def test_fuse_node_mmr_reorders() -> None:
    candidates = [[sc("a", 0.9), sc("a2", 0.8), sc("b", 0.5)]]
    update = fuse({"question": "q", "candidates": candidates}, _deps(mmr=True, mmr_lambda=0.5))
    assert [s.chunk.id for s in update["ranked"]] == ["a", "b", "a2"]
    assert update["trace"][0].detail["mmr"] is True


def doc_chunk(cid: str, doc: str, score: float) -> ScoredChunk:
    """A scored chunk of document doc."""
    chunk = Chunk(id=cid, source_id=f"{doc}.md", doc_id=doc, text=cid, start=0, end=len(cid))
    return ScoredChunk(chunk=chunk, score=score, score_origin="convex")


def test_sibling_evidence_hand_computed() -> None:
    ranked = [doc_chunk("x1", "x", 0.9), doc_chunk("y1", "y", 0.8), doc_chunk("y2", "y", 0.6),
              doc_chunk("y3", "y", 0.3), doc_chunk("z1", "z", 0.7)]
    rescored = sibling_evidence(ranked, 0.75)
    # y1: 0.8 + 0.75·(0.6/2 + 0.3/3) = 1.1; y2: 0.6 + 0.75·(0.8/2 + 0.3/3) = 0.975;
    # y3: 0.3 + 0.75·(0.8/2 + 0.6/3) = 0.75; x1 and z1 have no siblings and keep their scores
    assert ranking(rescored) == [("y1", 1.1), ("y2", 0.975), ("x1", 0.9), ("y3", 0.75),
                                 ("z1", 0.7)]
    assert [s.score_origin for s in rescored] == ["convex+siblings"] * 2 + ["convex"] + [
        "convex+siblings", "convex"]
    assert sibling_evidence(ranked, 0.0) == ranked


def test_fuse_node_applies_sibling_evidence_and_traces_it() -> None:
    candidates = [[doc_chunk("x1", "x", 0.9), doc_chunk("y1", "y", 0.8),
                   doc_chunk("y2", "y", 0.6)]]
    update = fuse({"question": "q", "candidates": candidates}, _deps(sibling_weight=1.0))
    assert [s.chunk.id for s in update["ranked"]] == ["y1", "y2", "x1"]  # 1.1, 1.0, 0.9
    detail = update["trace"][0].detail
    assert detail["sibling_weight"] == 1.0 and detail["with_siblings"] == 2


def test_a_sibling_window_counts_only_nearby_chunks_of_the_document() -> None:
    def at(cid: str, doc: str, score: float, start: int) -> ScoredChunk:
        chunk = Chunk(id=cid, source_id=f"{doc}.md", doc_id=doc, text=cid, start=start,
                      end=start + 80)
        return ScoredChunk(chunk=chunk, score=score, score_origin="convex")

    ranked = [at("far", "long", 0.9, 0), at("near1", "long", 0.5, 5000), at("near2", "long", 0.4, 5100),
              at("row", "csv", 0.8, 0)]
    # whole document: far gains 0.75·(0.5/2 + 0.4/3) = 0.2875 from chunks 5 kB away
    assert ranking(sibling_evidence(ranked, 0.75))[0] == ("far", 1.1875)
    local = ranking(sibling_evidence(ranked, 0.75, window=300))
    assert local == [("far", 0.9), ("row", 0.8), ("near1", 0.65), ("near2", 0.5875)]
