"""The ranking stage of the retrieval subgraph: a per-document cap, a recency boost and a
language-mismatch down-rank, applied to the best ranking so far (after rerank when there is one).

A node only when one of them is on in the settings, or `ranking.per_request` keeps it for runs
whose input `ranking` turns them on. The boosts work on min-max normalised scores, whatever the
scale of the stage before (RRF, convex, a reranker): `adjusted = norm + recency_weight ·
2^(-age / half-life) − lang_penalty · [passage language ≠ request language]`; passages without a
`last_modified` get no boost, passages without a `lang` no penalty. The cap then keeps the best
`source_cap` passages of each document (or source, `cap_by`); after a reranker, which kept only
top_n, the places the cap freed are refilled from the pre-rerank ranking. Every move is traced.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ragloom.errors import QueryError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fusion_math import minmax
from ragloom.nodes.trace import StageClock
from ragloom.settings import RankingSettings
from ragloom.state import RagState, ScoredChunk
from ragloom.stores.filters import to_timestamp

KNOBS = ("source_cap", "cap_by", "recency_weight", "recency_half_life_days", "lang_penalty")
"""Keys a run's input `ranking` may set."""
DAY_S = 86400.0


def knobs_on(settings: RankingSettings) -> bool:
    """Whether any of the cap, the recency boost or the language down-rank does work."""
    return settings.source_cap > 0 or settings.recency_weight > 0 or settings.lang_penalty > 0


def ranking_active(settings: RankingSettings) -> bool:
    """Whether the retrieval subgraph has the ranking node under these settings."""
    return settings.per_request or knobs_on(settings)


def run_ranking(base: RankingSettings, override: Any) -> RankingSettings | None:
    """The ranking settings of a run with the input's `ranking` applied (None: no override);
    QueryError when the override is malformed or needs the stage these settings leave out."""
    if override is None:
        return None
    if not isinstance(override, Mapping):
        raise QueryError(f"ranking must be a mapping, got {type(override).__name__}",
                         where="input.ranking", hint=f"keys: {', '.join(KNOBS)}")
    unknown = sorted(set(override) - set(KNOBS))
    if unknown:
        raise QueryError(f"unknown ranking knob(s) {', '.join(map(str, unknown))}",
                         where="input.ranking", hint=f"known: {', '.join(KNOBS)}")
    try:
        merged = RankingSettings.model_validate({**base.model_dump(), **override})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise QueryError(f"invalid ranking.{'.'.join(map(str, first['loc']))}: {first['msg']}",
                         where="input.ranking", hint=f"known knobs: {', '.join(KNOBS)}") from exc
    if knobs_on(merged) and not ranking_active(base):
        raise QueryError("this graph has no ranking stage, so input.ranking cannot turn one on",
                         where="input.ranking",
                         hint="build the graph with ranking.per_request: true (or a knob on)")
    return merged


def freshness(modified: Any, now: float, half_life_days: float) -> float:
    """2^(-age / half-life) of a `last_modified` value (epoch seconds or ISO date), 0 if unknown."""
    stamp = to_timestamp(modified)
    if stamp is None:
        return 0.0
    age_days = max(0.0, now - stamp) / DAY_S
    return 0.5 ** (age_days / half_life_days)


def boost(ranked: Sequence[ScoredChunk], settings: RankingSettings, lang: str | None,
          now: float) -> tuple[list[ScoredChunk], dict[str, Any]]:
    """Re-score by recency and language match; return the new order and what changed."""
    penalise = settings.lang_penalty > 0 and bool(lang)
    if not ranked or (settings.recency_weight <= 0 and not penalise):
        return list(ranked), {}
    adjusted: list[tuple[float, int, ScoredChunk]] = []
    boosted = penalised = 0
    norms = minmax([s.score for s in ranked])
    for position, (scored, norm) in enumerate(zip(ranked, norms, strict=True)):
        fresh = freshness(scored.chunk.metadata.get("last_modified"), now,
                          settings.recency_half_life_days)
        passage_lang = scored.chunk.metadata.get("lang")
        mismatch = penalise and isinstance(passage_lang, str) and passage_lang != lang
        value = norm + settings.recency_weight * fresh - (settings.lang_penalty if mismatch else 0.0)
        boosted += fresh > 0 and settings.recency_weight > 0
        penalised += bool(mismatch)
        origin = f"{scored.score_origin}+ranking"
        adjusted.append((value, position, scored.model_copy(
            update={"score": round(value, 6), "score_origin": origin})))
    adjusted.sort(key=lambda item: (-item[0], item[1]))
    moved = sum(1 for new, (_, old, _) in enumerate(adjusted) if new != old)
    detail = {"recency_boosted": boosted, "lang_down_ranked": penalised, "moved": moved}
    return [scored for _, _, scored in adjusted], detail


def cap(ranked: Sequence[ScoredChunk], limit: int, by: str,
        counts: Counter[str] | None = None) -> tuple[list[ScoredChunk], int]:
    """Keep at most `limit` passages per document (or source); return the kept and the dropped
    count. `counts` carries what earlier lists already used."""
    used: Counter[str] = counts if counts is not None else Counter()
    kept: list[ScoredChunk] = []
    for scored in ranked:
        key = scored.chunk.doc_id if by == "document" else scored.chunk.source_id
        if used[key] < limit:
            used[key] += 1
            kept.append(scored)
    return kept, len(ranked) - len(kept)


def ranking(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Apply the per-document cap, the recency boost and the language down-rank to the ranking."""
    settings = run_ranking(deps.settings.ranking, state.get("ranking")) or deps.settings.ranking
    pool = state.get("ranked") or []
    with StageClock("ranking") as clock:
        if not knobs_on(settings):
            return {"ranked": pool, "trace": clock.skip("every ranking knob is off for this run")}
        clock.note(source_cap=settings.source_cap, cap_by=settings.cap_by,
                   recency_weight=settings.recency_weight, lang_penalty=settings.lang_penalty,
                   lang=state.get("lang"), inputs=len(pool))
        ranked, detail = boost(pool, settings, state.get("lang"), time.time())
        clock.note(**detail)
        if settings.source_cap > 0:
            counts: Counter[str] = Counter()
            ranked, dropped = cap(ranked, settings.source_cap, settings.cap_by, counts)
            clock.note(capped=dropped)
            top_n = state.get("top_n") or deps.settings.rerank.top_n
            if "reserve" in state and dropped and len(ranked) < top_n:  # a reranker cut the list
                refill, _ = cap(state["reserve"], settings.source_cap, settings.cap_by, counts)
                refill = refill[: top_n - len(ranked)]
                ranked = [*ranked, *refill]
                clock.note(refilled=len(refill))
        clock.note(outputs=len(ranked))
    return {"ranked": ranked, "trace": clock.trace()}
