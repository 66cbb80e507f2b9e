"""The retrieve node over an in-test brute-force DocumentIndex and a stub BM25 index."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

from ragloom.errors import StoreError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fusion_math import dedup
from ragloom.nodes.retrieve import retrieve
from ragloom.nodes.text import tokenize
from ragloom.settings import RagSettings
from ragloom.state import Chunk, ScoredChunk

TEXTS = {
    "battery": "The Lumen battery lasts twelve hours on a full charge.",
    "charging": "Charge the Lumen with the USB-C cable; a full charge takes two hours.",
    "warranty": "The warranty covers manufacturing defects for two years.",
    "colors": "Lumen comes in slate, sand and moss colors.",
}


class HashEmbedder:
    """Deterministic bag-of-stems embedder (hashing trick), unit vectors."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.precisions: list[str] = []

    def embed_array(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        matrix = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                matrix[row, zlib.crc32(token.encode()) % 64] += 1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1, norms)

    def embed_queries(self, texts: list[str], *, precision: str = "fp32") -> np.ndarray:
        self.precisions.append(precision)
        return self.embed_array(texts)


class BruteForceIndex:
    """A numpy brute-force implementation of the DocumentIndex search protocol."""

    collection = "test"

    def __init__(self, chunks: list[Chunk], embedder: HashEmbedder) -> None:
        self.chunks = chunks
        self.matrix = embedder.embed_array([c.text for c in chunks])
        self.fetched: list[str] = []

    def search(
        self, vector: np.ndarray, k: int, where: dict[str, Any] | None = None
    ) -> list[ScoredChunk]:
        scores = self.matrix @ vector
        order = np.argsort(-scores, kind="stable")
        hits = [
            ScoredChunk(chunk=self.chunks[i], score=float(scores[i]), score_origin="vector")
            for i in order
            if not where or all(self.chunks[i].metadata.get(f) == v for f, v in where.items())
        ]
        return hits[:k]

    def search_ids(
        self, vector: np.ndarray, k: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        return [(h.chunk.id, h.score) for h in self.search(vector, k, where)]

    def get_chunks(self, ids: list[str]) -> list[Chunk]:
        self.fetched.extend(ids)
        return [c for c in self.chunks if c.id in ids]


class KeywordBm25:
    """Stub BM25: score = number of shared stems, positive scores only."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks

    def lookup(self, ids: Any) -> dict[str, Chunk]:
        return {c.id: c for c in self.chunks if c.id in set(ids)}

    def search(self, query: str, k: int, where: dict[str, Any] | None = None) -> list[ScoredChunk]:
        asked = set(tokenize(query))
        scored = [(len(asked & set(tokenize(c.text))), c) for c in self.chunks]
        hits = [
            ScoredChunk(chunk=c, score=float(s), score_origin="bm25")
            for s, c in sorted(scored, key=lambda p: -p[0])
            if s > 0 and (not where or all(c.metadata.get(f) == v for f, v in where.items()))
        ]
        return hits[:k]


@pytest.fixture
def corpus() -> list[Chunk]:
    return [
        Chunk(
            id=cid,
            source_id=f"{cid}.md",
            doc_id=cid,
            text=text,
            start=0,
            end=len(text),
            metadata={"topic": "power" if cid in ("battery", "charging") else "other"},
        )
        for cid, text in TEXTS.items()
    ]


def make_deps(corpus: list[Chunk], bm25: bool = True, **retrieval: Any) -> RagDeps:
    settings = RagSettings.model_validate({"retrieval": {"candidate_k": 3, **retrieval}})
    embedder = HashEmbedder()
    index = BruteForceIndex(corpus, embedder)
    embedder.calls.clear()
    return RagDeps(
        settings=settings,
        index=index,
        embedder=embedder,  # type: ignore[arg-type]
        bm25=KeywordBm25(corpus) if bm25 else None,
    )


@pytest.mark.parametrize(
    ("mode", "fusion", "origin"),
    [
        ("vector", "rrf", "vector"),
        ("bm25", "rrf", "bm25"),
        ("hybrid", "rrf", "rrf"),
        ("hybrid", "convex", "convex"),
    ],
)
def test_modes_return_one_list_per_probe(
    corpus: list[Chunk], mode: str, fusion: str, origin: str
) -> None:
    deps = make_deps(corpus, mode=mode, fusion=fusion)
    probes = ["how long does the battery last", "warranty defects"]
    update = retrieve({"question": probes[0], "probes": probes}, deps)
    candidates = update["candidates"]
    assert len(candidates) == 2 and all(len(c) <= 3 for c in candidates)
    assert candidates[0][0].chunk.id == "battery" and candidates[1][0].chunk.id == "warranty"
    assert {s.score_origin for c in candidates for s in c} == {origin}
    detail = update["trace"][0].detail
    assert detail["mode"] == mode and detail["candidates"] == [len(c) for c in candidates]
    assert update["ranked"] == dedup(candidates[0])  # until a later stage replaces it


def test_probes_are_embedded_in_one_batch(corpus: list[Chunk]) -> None:
    deps = make_deps(corpus, mode="hybrid")
    retrieve({"question": "q", "probes": ["battery hours", "charge cable", "colors"]}, deps)
    assert deps.embedder.calls == [["battery hours", "charge cable", "colors"]]  # type: ignore[attr-defined]


def test_filters_reach_both_legs(corpus: list[Chunk]) -> None:
    deps = make_deps(corpus, mode="hybrid")
    update = retrieve({"question": "two years two hours", "filters": {"topic": "other"}}, deps)
    assert {s.chunk.id for s in update["candidates"][0]} <= {"warranty", "colors"}
    assert update["trace"][0].detail["filtered"] is True


def test_hybrid_without_bm25_degrades_to_vector_traced(corpus: list[Chunk]) -> None:
    update = retrieve({"question": "battery"}, make_deps(corpus, bm25=False, mode="hybrid"))
    detail = update["trace"][0].detail
    assert detail["mode"] == "vector" and "bm25 index missing" in detail["degraded"]
    assert update["candidates"][0][0].score_origin == "vector"


def test_bm25_mode_without_index_fails_clearly(corpus: list[Chunk]) -> None:
    with pytest.raises(StoreError, match="needs a BM25 index"):
        retrieve({"question": "battery"}, make_deps(corpus, bm25=False, mode="bm25"))


def test_dense_hits_resolve_from_memory_then_from_the_index(corpus: list[Chunk]) -> None:
    deps = make_deps(corpus, mode="vector")
    index: BruteForceIndex = deps.index  # type: ignore[assignment]
    deps.bm25 = KeywordBm25([c for c in corpus if c.id != "battery"])  # ingest in progress
    update = retrieve({"question": "battery hours"}, deps)
    hits = update["candidates"][0]
    assert hits[0].chunk.id == "battery" and hits[0].chunk.text == TEXTS["battery"]
    assert index.fetched == ["battery"]
    assert update["trace"][0].detail["chunks_read_from_store"] == 1
    assert [h.chunk.id for h in hits] == [h.chunk.id for h in index.search(
        deps.embedder.embed_array(["battery hours"])[0], 3)]


def test_query_precision_reaches_the_embedder_and_the_trace(corpus: list[Chunk]) -> None:
    deps = make_deps(corpus, mode="vector", query_precision="int8")
    update = retrieve({"question": "battery hours"}, deps)
    assert deps.embedder.precisions == ["int8"]  # type: ignore[attr-defined]
    assert update["trace"][0].detail["query_precision"] == "int8"
    assert "chunks_read_from_store" not in update["trace"][0].detail
