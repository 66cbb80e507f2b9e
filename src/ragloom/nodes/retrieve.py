"""The retrieve node: dense, BM25 or hybrid retrieval for every probe."""

from __future__ import annotations

import time
from typing import Any

from ragloom.errors import StoreError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fusion_math import convex, dedup, rrf
from ragloom.nodes.pool import retrieval_text
from ragloom.nodes.trace import StageClock, log_once
from ragloom.settings import RetrievalSettings
from ragloom.state import RagState, ScoredChunk

BM25_MISSING = ("bm25 index missing or unreadable: hybrid retrieval degraded to vector until "
                "`ragloom ingest` rebuilds it")


def _ms_since(start: float) -> float:
    """Milliseconds elapsed since a perf_counter reading."""
    return round((time.perf_counter() - start) * 1000.0, 3)


def _effective_mode(deps: RagDeps, bm25: Any | None, clock: StageClock) -> str:
    """The retrieval mode this run can serve, with a traced degradation when BM25 is missing."""
    mode = deps.settings.retrieval.mode
    if mode == "vector" or bm25 is not None:
        return mode
    if mode == "bm25":
        raise StoreError(
            "retrieval mode 'bm25' needs a BM25 index and none is loaded",
            where="retrieve",
            hint="re-run `ragloom ingest` on the collection (it rebuilds the index), or set "
                 "retrieval.mode to 'vector' or 'hybrid'",
        )
    log_once("retrieve.bm25-missing", BM25_MISSING)
    clock.note(degraded=BM25_MISSING)
    return "vector"


def _dense_legs(probes: list[str], deps: RagDeps, bm25: Any | None,
                filters: dict[str, Any] | None, clock: StageClock) -> list[list[ScoredChunk]]:
    """Embed all probes in one batch and search the document index for each."""
    k = deps.settings.retrieval.candidate_k
    start = time.perf_counter()
    precision = deps.settings.retrieval.query_precision
    vectors = deps.embedder.embed_queries(probes, precision=precision)
    embed_ms = _ms_since(start)
    start = time.perf_counter()
    if bm25 is None:
        legs = [deps.index.search(vector, k, where=filters) for vector in vectors]
    else:
        hits = [deps.index.search_ids(vector, k, where=filters) for vector in vectors]
        legs = _resolve(hits, bm25, deps, clock)
    clock.note(embed_ms=embed_ms, query_precision=precision, vector_ms=_ms_since(start),
               vector_hits=[len(leg) for leg in legs])
    return legs


def _resolve(hits: list[list[tuple[str, float]]], bm25: Any, deps: RagDeps,
             clock: StageClock) -> list[list[ScoredChunk]]:
    """Chunks for dense hits from the in-memory copy the BM25 index holds (rebuilt from Chroma at
    every ingest); ids it lacks (an ingest in progress) are read from the document index, traced."""
    ids = {i for leg in hits for i, _ in leg}
    chunks = bm25.lookup(ids)
    missing = [i for i in ids if i not in chunks]
    if missing:
        chunks.update({c.id: c for c in deps.index.get_chunks(missing)})
        clock.note(chunks_read_from_store=len(missing))
    return [
        [ScoredChunk(chunk=chunks[i], score=score, score_origin="vector")
         for i, score in leg if i in chunks]
        for leg in hits
    ]


def _bm25_legs(probes: list[str], deps: RagDeps, bm25: Any,
               filters: dict[str, Any] | None, clock: StageClock) -> list[list[ScoredChunk]]:
    """Search the BM25 index for each probe."""
    k = deps.settings.retrieval.candidate_k
    start = time.perf_counter()
    legs = [bm25.search(probe, k, where=filters) for probe in probes]
    clock.note(bm25_ms=_ms_since(start), bm25_hits=[len(leg) for leg in legs])
    return legs


def fuse_legs(
    dense: list[ScoredChunk], sparse: list[ScoredChunk], settings: RetrievalSettings
) -> list[ScoredChunk]:
    """Fuse one probe's dense and BM25 lists with the configured method."""
    if settings.fusion == "convex":
        return convex(dense, sparse, settings.convex_bm25_weight, limit=settings.candidate_k)
    return rrf([dense, sparse], k=settings.rrf_k, limit=settings.candidate_k)


def retrieve(state: RagState, deps: RagDeps) -> dict:
    """Retrieve candidates for every probe with the configured retrieval mode; the first probe's
    deduplicated candidates are the ranking until a later stage replaces it."""
    settings = deps.settings.retrieval
    probes = state.get("probes") or [retrieval_text(state)]
    filters = state.get("filters") or None
    with StageClock("retrieve") as clock:
        bm25 = deps.bm25_index()  # one snapshot for the whole query
        mode = _effective_mode(deps, bm25, clock)
        clock.note(
            mode=mode, probes=len(probes), candidate_k=settings.candidate_k, filtered=bool(filters)
        )
        dense = _dense_legs(probes, deps, bm25, filters, clock) if mode != "bm25" else None
        sparse = _bm25_legs(probes, deps, bm25, filters, clock) if mode != "vector" else None
        if dense is not None and sparse is not None:
            candidates = [fuse_legs(d, s, settings) for d, s in zip(dense, sparse, strict=True)]
            clock.note(fusion=settings.fusion)
        else:
            candidates = [leg[: settings.candidate_k] for leg in (dense or sparse or [])]
        clock.note(candidates=[len(c) for c in candidates])
    return {"candidates": candidates, "ranked": dedup(candidates[0]), "trace": clock.trace()}
