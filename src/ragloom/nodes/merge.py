"""Merging the rankings of several retrievals: the rounds of a corrective loop, the hops of a
multi-hop question."""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.nodes.assemble import fit_budget
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fuse import rrf
from ragloom.state import ScoredChunk

MERGE_RRF_K = 60


def merge_rankings(rankings: Sequence[Sequence[ScoredChunk]], top_n: int,
                   deps: RagDeps) -> list[ScoredChunk]:
    """One ranking from several: reciprocal rank fusion (k = 60, rank-based, so the scores of
    different probes need not be comparable) in which the best passage of every ranking is sure of
    a place, cut to top_n and fitted to the assemble budget. A chunk found by several rankings
    keeps its version from the first of them."""
    lists = [list(r) for r in rankings if r]
    if not lists:
        return []
    fused = rrf(lists, k=MERGE_RRF_K)
    heads = {r[0].chunk.id for r in lists}
    room = max(top_n - len(heads), 0)
    keep = heads | {s.chunk.id for s in [s for s in fused if s.chunk.id not in heads][:room]}
    chosen = [s for s in fused if s.chunk.id in keep]
    settings = deps.settings.assemble
    passages, _, _ = fit_budget(chosen, settings.token_budget, settings.chars_per_token)
    return passages
