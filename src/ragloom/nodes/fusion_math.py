"""Fusion arithmetic as pure functions of ranked lists: RRF, convex min-max, union-max, dedup,
sibling evidence and MMR. It imports no node, so every retrieval stage can build on it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from ragloom.state import Chunk, ScoredChunk

ORIGIN_RRF = "rrf"
ORIGIN_CONVEX = "convex"


def dedup(chunks: Sequence[ScoredChunk]) -> list[ScoredChunk]:
    """Keep the first occurrence of each chunk id, order preserved."""
    seen: set[str] = set()
    unique: list[ScoredChunk] = []
    for scored in chunks:
        if scored.chunk.id not in seen:
            seen.add(scored.chunk.id)
            unique.append(scored)
    return unique


def rrf(
    lists: Sequence[Sequence[ScoredChunk]], k: int = 60, limit: int | None = None
) -> list[ScoredChunk]:
    """Reciprocal rank fusion: score(d) = Σ 1/(k + rank_i(d)), 1-based ranks, ties in seen order."""
    scores: dict[str, float] = {}
    first: dict[str, ScoredChunk] = {}
    for ranked in lists:
        for rank, scored in enumerate(dedup(ranked), start=1):
            first.setdefault(scored.chunk.id, scored)
            scores[scored.chunk.id] = scores.get(scored.chunk.id, 0.0) + 1.0 / (k + rank)
    order = sorted(first, key=lambda cid: -scores[cid])
    fused = [
        ScoredChunk(chunk=first[c].chunk, score=scores[c], score_origin=ORIGIN_RRF) for c in order
    ]
    return fused[:limit] if limit is not None else fused


def minmax(scores: Sequence[float]) -> list[float]:
    """Min-max normalise scores into [0, 1]; a constant list maps to 1.0."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    span = high - low
    return [(v - low) / span if span > 0 else 1.0 for v in scores]


def _minmax(ranked: Sequence[ScoredChunk]) -> dict[str, float]:
    """Chunk id → min-max normalised score, first occurrence of each chunk."""
    unique = dedup(ranked)
    return dict(zip((s.chunk.id for s in unique), minmax([s.score for s in unique]), strict=True))


def convex(
    dense: Sequence[ScoredChunk],
    sparse: Sequence[ScoredChunk],
    bm25_weight: float,
    limit: int | None = None,
) -> list[ScoredChunk]:
    """Convex fusion (1-w)·minmax(dense) + w·minmax(bm25); a chunk missing from a leg gets 0."""
    dense_norm, sparse_norm = _minmax(dense), _minmax(sparse)
    chunks: dict[str, Chunk] = {}
    for scored in [*dense, *sparse]:
        chunks.setdefault(scored.chunk.id, scored.chunk)
    order = list(chunks)
    scores = {
        cid: (1.0 - bm25_weight) * dense_norm.get(cid, 0.0)
        + bm25_weight * sparse_norm.get(cid, 0.0)
        for cid in order
    }
    order.sort(key=lambda cid: -scores[cid])
    fused = [
        ScoredChunk(chunk=chunks[c], score=scores[c], score_origin=ORIGIN_CONVEX) for c in order
    ]
    return fused[:limit] if limit is not None else fused


def union_max(
    lists: Sequence[Sequence[ScoredChunk]], limit: int | None = None
) -> list[ScoredChunk]:
    """Union by chunk id keeping each chunk's best score; sorted by score, ties in seen order."""
    best: dict[str, ScoredChunk] = {}
    for ranked in lists:
        for scored in ranked:
            kept = best.get(scored.chunk.id)
            if kept is None or scored.score > kept.score:
                best[scored.chunk.id] = scored
    merged = sorted(best.values(), key=lambda s: -s.score)
    return merged[:limit] if limit is not None else merged


def _siblings(scored: ScoredChunk, same_doc: Sequence[ScoredChunk], window: int | None) -> list[float]:
    """Scores of the other candidates of the chunk's document (within window chars of its start
    when a window is given), best first."""
    return sorted((o.score for o in same_doc if o is not scored and (
        window is None or abs(o.chunk.start - scored.chunk.start) <= window)), reverse=True)


def sibling_evidence(ranked: Sequence[ScoredChunk], weight: float,
                     window: int | None = None) -> list[ScoredChunk]:
    """Document-aware rescoring: a chunk gains weight × Σ s_i / (i + 2) over the other candidates
    of its document, best first (the best sibling counts ½, the next ⅓, ...); then re-sorted.

    With small chunks a relevant passage matches in several of them. With `window`, only
    candidates starting within that many characters of the chunk's start count: evidence from the
    same passage, never from elsewhere in a long document, so documents do not win on length or
    chunk count (chunks longer than the window get no siblings). Meant for fused scores in [0, 1].
    """
    if weight <= 0:
        return list(ranked)
    by_doc: dict[str, list[ScoredChunk]] = defaultdict(list)
    for scored in ranked:
        by_doc[scored.chunk.doc_id].append(scored)
    rescored: list[ScoredChunk] = []
    for scored in ranked:
        others = _siblings(scored, by_doc[scored.chunk.doc_id], window)
        bonus = weight * sum(score / (i + 2) for i, score in enumerate(others))
        rescored.append(scored if not others else ScoredChunk(
            chunk=scored.chunk, score=scored.score + bonus,
            score_origin=f"{scored.score_origin}+siblings"))
    return sorted(rescored, key=lambda s: -s.score)


def _unit(vector: np.ndarray) -> np.ndarray:
    """Scale a vector to unit length (zero stays zero)."""
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def mmr(
    query: np.ndarray,
    candidates: Sequence[ScoredChunk],
    embeddings: Mapping[str, np.ndarray],
    lambda_: float,
    limit: int | None = None,
) -> list[ScoredChunk]:
    """Maximal marginal relevance: pick argmax λ·sim(q, d) − (1−λ)·max sim(d, chosen) in turn.

    Chunks without a stored embedding keep their order after the diversified ones.
    """
    pool = [s for s in dedup(candidates) if s.chunk.id in embeddings]
    rest = [s for s in dedup(candidates) if s.chunk.id not in embeddings]
    if not pool:
        return rest[:limit] if limit is not None else rest
    matrix = np.stack([_unit(np.asarray(embeddings[s.chunk.id], dtype=np.float32)) for s in pool])
    relevance = matrix @ _unit(np.asarray(query, dtype=np.float32).ravel())
    similarity = matrix @ matrix.T
    selected: list[int] = []
    remaining = list(range(len(pool)))
    while remaining:
        redundancy = (
            similarity[np.ix_(remaining, selected)].max(axis=1)
            if selected
            else np.zeros(len(remaining))
        )
        gains = lambda_ * relevance[remaining] - (1.0 - lambda_) * redundancy
        selected.append(remaining.pop(int(np.argmax(gains))))
    ordered = [pool[i] for i in selected] + rest
    return ordered[:limit] if limit is not None else ordered
