"""Metrics: trec_eval retrieval metrics against hand-computed values, answer strings, refusals."""

from __future__ import annotations

import math

import pytest

from ragloom.evaluation.metrics import (
    exact_match,
    is_refusal,
    mean,
    normalize_answer,
    percentile,
    ranked_documents,
    retrieval_metrics,
    run_scores,
    substring_hits,
    token_f1,
)


def test_retrieval_metrics_match_a_hand_computed_case() -> None:
    qrels = {"q1": {"d1": 1, "d3": 1}, "q2": {"d9": 1}, "q3": {"d5": 1}, "unjudged": {}}
    rankings = {"q1": ["d2", "d1", "d4", "d3"], "q2": ["d1", "d2"], "q3": [], "unjudged": ["d1"]}
    got = retrieval_metrics(qrels, rankings, k=2)
    assert set(got) == {"q1", "q2", "q3"}  # a query without relevant documents is not scored
    # q1: relevant at ranks 2 and 4. recall@2 = 1/2; MRR = 1/2;
    # nDCG@10 = (1/log2(3) + 1/log2(5)) / (1/log2(2) + 1/log2(3)).
    ndcg = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert got["q1"]["recall@2"] == pytest.approx(0.5)
    assert got["q1"]["mrr@10"] == pytest.approx(0.5)
    assert got["q1"]["ndcg@10"] == pytest.approx(ndcg)
    assert got["q2"] == {"recall@2": 0.0, "mrr@10": 0.0, "ndcg@10": 0.0}
    assert got["q3"] == {"recall@2": 0.0, "mrr@10": 0.0, "ndcg@10": 0.0}
    deeper = retrieval_metrics(qrels, rankings, k=5)
    assert deeper["q1"]["recall@5"] == pytest.approx(1.0)


def test_mrr_cuts_off_at_ten_and_graded_relevance_counts_in_ndcg() -> None:
    ranking = [f"x{i}" for i in range(10)] + ["hit"]
    assert retrieval_metrics({"q": {"hit": 1}}, {"q": ranking}, k=5)["q"]["mrr@10"] == 0.0
    graded = retrieval_metrics({"q": {"a": 2, "b": 1}}, {"q": ["b", "a"]}, k=5)["q"]["ndcg@10"]
    ideal_first = retrieval_metrics({"q": {"a": 2, "b": 1}}, {"q": ["a", "b"]}, k=5)["q"]["ndcg@10"]
    assert ideal_first == pytest.approx(1.0) and graded < 1.0


def test_documents_rank_by_their_best_chunk_without_ties() -> None:
    ranked = ranked_documents(["b", "a", "b", "c", "a"])
    assert ranked == ["b", "a", "c"]
    scores = run_scores(ranked)
    assert sorted(scores, key=lambda d: -scores[d]) == ranked
    assert len(set(scores.values())) == len(scores)


def test_squad_normalisation_exact_match_and_token_f1() -> None:
    assert normalize_answer("The  Cat, sat! [1]") == "cat sat"
    assert exact_match("the cat sat [2].", "Cat sat") == 1.0
    assert exact_match("a cat sat down", "cat sat") == 0.0
    # prediction tokens {cat, sat}, reference {cat, sat, on, mat}: P = 1, R = 1/2, F1 = 2/3
    assert token_f1("the cat sat", "cat sat on the mat") == pytest.approx(2 / 3)
    assert token_f1("dog", "cat") == 0.0
    assert token_f1("", "") == 1.0


def test_expected_substrings_ignore_case_markers_and_dash_style() -> None:
    assert substring_hits("It costs 529 [1] euros; range 25–50 mm.", ["529 euros", "25-50 MM"]) == (2, 2)
    assert substring_hits("It costs 529 euros.", ["529", "349"]) == (1, 2)
    assert substring_hits("anything", []) == (0, 0)


@pytest.mark.parametrize("text,refused", [
    ("I don't know", True), ("I don't know: no passages were retrieved.", True),
    ("I do not know the price of that model.", True), ("", True),
    ("The passages do not contain that information.", True),
    ("I cannot answer that from the passages.", True),
    ("The Lumen Max costs 529 euros [1].", False),
    ("Knowing the altitude matters: enter it in the app [2].", False),
])
def test_refusals_are_recognised(text: str, refused: bool) -> None:
    assert is_refusal(text) is refused


def test_percentiles_interpolate_and_mean_skips_missing() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 95) == pytest.approx(95.05)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None]) is None
