"""The ranking stage: per-document cap, recency boost, language down-rank, per-run knobs."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from ragloom.errors import QueryError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.ranking import boost, cap, freshness, ranking, ranking_active, run_ranking
from ragloom.nodes.rerank import rerank
from ragloom.settings import RagSettings, RankingSettings
from ragloom.state import Chunk, ScoredChunk

NOW = 1_800_000_000.0
DAY = 86400


def sc(cid: str, score: float, doc: str = "", **meta: Any) -> ScoredChunk:
    chunk = Chunk(id=cid, source_id=f"src-{doc or cid}", doc_id=doc or cid, text=cid, start=0,
                  end=len(cid), metadata=meta)
    return ScoredChunk(chunk=chunk, score=score, score_origin="rrf")


def deps(**ranking_settings: Any) -> RagDeps:
    settings = RagSettings(ranking=RankingSettings(**ranking_settings))
    return RagDeps(settings=settings, index=None, embedder=None)  # type: ignore[arg-type]


def test_freshness_halves_every_half_life() -> None:
    assert freshness(NOW, NOW, 30) == 1.0
    assert freshness(NOW - 30 * DAY, NOW, 30) == pytest.approx(0.5)
    assert freshness("2020-01-01", NOW, 30) < 0.01
    assert freshness(None, NOW, 30) == 0.0 and freshness("soon", NOW, 30) == 0.0


def test_recency_boost_lifts_a_fresh_passage_over_a_stale_better_one() -> None:
    ranked = [sc("old", 0.9, last_modified=NOW - 3000 * DAY), sc("mid", 0.5),
              sc("new", 0.85, last_modified=NOW - DAY)]
    out, detail = boost(ranked, RankingSettings(recency_weight=0.5, recency_half_life_days=30),
                        None, NOW)
    assert [s.chunk.id for s in out] == ["new", "old", "mid"]
    assert detail == {"recency_boosted": 2, "lang_down_ranked": 0, "moved": 3}
    assert all(s.score_origin == "rrf+ranking" for s in out)


def test_language_mismatch_is_down_ranked_and_unknown_languages_are_not() -> None:
    ranked = [sc("en", 0.9, lang="en"), sc("fr", 0.8, lang="fr"), sc("none", 0.1)]
    out, detail = boost(ranked, RankingSettings(lang_penalty=0.5), "fr", NOW)
    assert [s.chunk.id for s in out] == ["fr", "en", "none"]
    assert detail["lang_down_ranked"] == 1
    assert boost(ranked, RankingSettings(lang_penalty=0.5), None, NOW) == (ranked, {})


def test_cap_counts_documents_or_sources() -> None:
    ranked = [sc("a1", 0.9, "a"), sc("a2", 0.8, "a"), sc("a3", 0.7, "a"), sc("b1", 0.6, "b")]
    kept, dropped = cap(ranked, 2, "document")
    assert [s.chunk.id for s in kept] == ["a1", "a2", "b1"] and dropped == 1
    kept, dropped = cap(ranked, 1, "source")
    assert [s.chunk.id for s in kept] == ["a1", "b1"] and dropped == 2


def test_after_a_reranker_the_places_the_cap_frees_are_refilled() -> None:
    reranked = [sc("a1", 5.0, "a"), sc("a2", 4.0, "a"), sc("a3", 3.0, "a")]
    fused = [*reranked, sc("a4", 0.2, "a"), sc("b1", 0.1, "b"), sc("c1", 0.05, "c")]
    state = {"question": "q", "ranked": reranked, "reserve": fused[3:], "top_n": 3}
    out = ranking(state, deps(source_cap=1))
    assert [s.chunk.id for s in out["ranked"]] == ["a1", "b1", "c1"]
    assert out["trace"][0].detail["capped"] == 2 and out["trace"][0].detail["refilled"] == 2


class DocAFirst:
    """A reranker that puts the chunks of document `a` first."""

    name = "doc-a-first"

    def rerank(self, question: str, chunks: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        """The chunks of document `a`, then the others, in their order."""
        return sorted(chunks, key=lambda s: s.chunk.doc_id != "a")[:top_n]


def test_the_refill_comes_from_what_the_rerank_node_passed_over() -> None:
    fused = [sc("b1", 0.9, "b"), sc("a1", 0.8, "a"), sc("a2", 0.7, "a"), sc("c1", 0.5, "c")]
    run = dataclasses.replace(deps(source_cap=1), reranker=DocAFirst())
    state: dict[str, Any] = {"question": "q", "ranked": fused, "top_n": 3}
    state |= rerank(state, run)  # type: ignore[arg-type]
    assert [s.chunk.id for s in state["reserve"]] == ["c1"]
    out = ranking(state, run)  # type: ignore[arg-type]
    assert [s.chunk.id for s in out["ranked"]] == ["a1", "b1", "c1"]
    assert out["trace"][0].detail["refilled"] == 1


def test_per_run_knobs_override_the_settings_and_are_validated() -> None:
    base = RankingSettings(per_request=True)
    assert run_ranking(base, None) is None
    assert run_ranking(base, {"source_cap": 2}).source_cap == 2  # type: ignore[union-attr]
    with pytest.raises(QueryError, match="unknown ranking knob"):
        run_ranking(base, {"cap": 2})
    with pytest.raises(QueryError, match="source_cap"):
        run_ranking(base, {"source_cap": -1})
    with pytest.raises(QueryError, match="no ranking stage"):
        run_ranking(RankingSettings(), {"lang_penalty": 0.3})
    assert ranking_active(base) and not ranking_active(RankingSettings())


def test_a_stage_kept_for_requests_passes_through_when_every_knob_is_off() -> None:
    fused = [sc("a1", 0.9, "a"), sc("a2", 0.8, "a")]
    out = ranking({"question": "q", "ranked": fused}, deps(per_request=True))
    assert out["ranked"] == fused and out["trace"][0].detail["skipped"] is True
    out = ranking({"question": "q", "ranked": fused, "ranking": {"source_cap": 1}},
                  deps(per_request=True))
    assert [s.chunk.id for s in out["ranked"]] == ["a1"]
    assert time.time() > NOW - 10 * 365 * DAY  # the clock the boost reads is a real one
