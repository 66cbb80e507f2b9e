"""Metrics: retrieval (through trec_eval), answer strings, refusals, citations, latency percentiles.

Retrieval metrics are computed by `pytrec_eval` (the trec_eval reference implementation; ranx,
used before, spends ~9 s compiling with numba in every process); everything else here is
plain string arithmetic so it can be checked by hand. The judged metrics (faithfulness, answer
relevancy, context precision and recall, citation support) live in `judge.py`.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ragloom.extras import require
from ragloom.nodes.generate import is_abstention
from ragloom.nodes.text import strip_markers

EMPTY_RUN_DOC = "__no_document__"
MRR_CUTOFF = 10
NDCG_CUTOFF = 10

_REFUSAL = re.compile(
    r"\b(i\s+(?:do\s+not|don['’]t)\s+know|i\s+(?:cannot|can['’]t|am\s+unable\s+to)\s+(?:answer|find)"
    r"|(?:the\s+)?(?:passages|context|documents)\s+(?:do(?:es)?\s+not|don['’]t)\s+(?:contain|say|mention)"
    r"|not\s+enough\s+information|no\s+passages\s+were\s+retrieved)\b",
    re.IGNORECASE,
)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.IGNORECASE)


def retrieval_metric_names(k: int) -> list[str]:
    """Metric names evaluated for every case: recall@k, MRR@10, nDCG@10."""
    return [f"recall@{k}", f"mrr@{MRR_CUTOFF}", f"ndcg@{NDCG_CUTOFF}"]


_TREC_MEASURES = {"recall": ("recall", "recall_{k}"), "ndcg": ("ndcg_cut", "ndcg_cut_{k}"),
                  "mrr": ("recip_rank", "recip_rank")}


def ir_metrics(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    names: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Per-query `recall@k`, `mrr@k` and `ndcg@k` by trec_eval; every qrels query is scored
    (a query missing from the run scores 0). Run scores rank documents, higher first."""
    pytrec_eval = require("pytrec_eval", "ragloom eval (retrieval metrics)")
    judged = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    filled = {q: dict(run.get(q) or {}) or {EMPTY_RUN_DOC: 0.0} for q in judged}
    results: dict[str, dict[str, float]] = {q: {} for q in judged}
    for name in names:
        kind, cutoff = name.split("@")
        measure, key = _TREC_MEASURES[kind]
        scored = filled
        if kind == "mrr":  # trec_eval's recip_rank has no cutoff: rank only the top k
            scored = {q: dict(sorted(docs.items(), key=lambda i: -i[1])[: int(cutoff)])
                      for q, docs in filled.items()}
        spec = measure if kind == "mrr" else f"{measure}.{cutoff}"
        evaluated = pytrec_eval.RelevanceEvaluator(judged, {spec}).evaluate(scored)
        for q in judged:
            results[q][name] = float(evaluated[q][key.format(k=cutoff)])
    return results


def ranked_documents(keys: Iterable[str]) -> list[str]:
    """Documents in the order of their first (best) chunk; a document scores as its best chunk."""
    seen: dict[str, None] = {}
    for key in keys:
        seen.setdefault(key, None)
    return list(seen)


def run_scores(ranked: Sequence[str]) -> dict[str, float]:
    """Scores that reproduce a ranking exactly (no ties): len - position."""
    return {doc: float(len(ranked) - position) for position, doc in enumerate(ranked)}


def retrieval_metrics(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    k: int,
) -> dict[str, dict[str, float]]:
    """Per-query recall@k, MRR@10 and nDCG@10; queries without judgments are skipped.

    `rankings` maps a query id to its documents, best first. Returns {query id: {metric: value}}.
    """
    judged = {q: {d: int(s) for d, s in docs.items() if s > 0} for q, docs in qrels.items()}
    judged = {q: docs for q, docs in judged.items() if docs and q in rankings}
    if not judged:
        return {}
    run = {q: run_scores(rankings[q]) for q in judged}
    return ir_metrics(judged, run, retrieval_metric_names(k))


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: no markers, lower case, no punctuation, no articles, single spaces."""
    text = strip_markers(text).lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation) | {"’", "‘", "“", "”"})
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when the normalised prediction equals the normalised reference."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 between the normalised prediction and reference."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def _squash(text: str) -> str:
    return " ".join(strip_markers(text).casefold().replace("–", "-").replace("—", "-").split())


def substring_hits(answer: str, expected: Sequence[str]) -> tuple[int, int]:
    """(expected substrings found in the answer, expected substrings), case-insensitive."""
    text = _squash(answer)
    return sum(1 for e in expected if _squash(e) in text), len(expected)


def is_refusal(text: str) -> bool:
    """True when an answer declines to answer ("I don't know" and common paraphrases)."""
    stripped = text.strip()
    return not stripped or is_abstention(stripped) or bool(_REFUSAL.search(stripped[:300]))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return float(ordered[low])
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
