"""A logistic regression over embedded, labelled exemplars: the mechanism of the semantic detectors.

Shared by the input guard (`ragloom.guardrails.semantic`: questions) and the injection screen
(`ragloom.ingestion.injection_semantic`: document windows). Exemplars are texts with one label
each; the fit (one weight row and bias per label) is made once with scikit-learn (imported only
here, when fitting: deterministic lbfgs) and kept as an `.npz` keyed by the embedding model, the
exemplars' digest and `C`. A detector ships the fit of its packaged exemplars, so scoring needs
neither scikit-learn nor an embedding of the exemplars; any other fit is written under a cache
directory. Scoring is a matrix product and a softmax over embeddings the caller supplies.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BATCH = 128
"""Exemplars embedded per call (below the embedder's torch threshold: the ONNX path)."""
logger = logging.getLogger("ragloom")

Embed = Callable[[list[str]], np.ndarray]
"""Texts to a matrix of unit vectors (an embedder's `embed_queries` or `embed_array`)."""


@dataclass(frozen=True)
class Exemplars:
    """Labelled texts: one label per text."""

    texts: tuple[str, ...]
    labels: tuple[str, ...]

    def digest(self) -> str:
        """A short hash of the texts and their labels (the fit's cache key)."""
        text = "\n".join(f"{c}\t{q}" for q, c in zip(self.texts, self.labels, strict=True))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Fit:
    """A fitted logistic regression: one weight row and bias per label (softmax over the rows)."""

    weights: np.ndarray
    bias: np.ndarray
    labels: tuple[str, ...]

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """One row per embedding: the probability of each label (columns in `labels` order)."""
        logits = np.atleast_2d(matrix) @ self.weights.T + self.bias
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return np.asarray(exp / exp.sum(axis=1, keepdims=True))


def model_name(embedder: object) -> str | None:
    """The embedding model's name (`embedder.profile.model`), or None for an unnamed embedder."""
    model = getattr(getattr(embedder, "profile", None), "model", None)
    return str(model) if model else None


def fit_key(embedder: object, exemplars: Exemplars, c: float) -> str | None:
    """What a stored fit must match: the embedding model, the exemplars and C (None: unnamed model)."""
    model = model_name(embedder)
    if model is None:
        return None
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', model)}-{exemplars.digest()}-c{c:g}"


def embed_all(embed: Embed, texts: Sequence[str]) -> np.ndarray:
    """Embed texts in batches of `BATCH`."""
    return np.concatenate([np.asarray(embed(list(texts[i:i + BATCH])))
                           for i in range(0, len(texts), BATCH)])


def fit_matrix(matrix: np.ndarray, labels: Sequence[str], c: float) -> Fit:
    """Fit the logistic regression (scikit-learn, balanced classes) on embedded exemplars.

    A two-label fit is stored as two rows (-w/2, +w/2), so its softmax is the regression's sigmoid.
    """
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    model.fit(matrix, np.array(labels))
    weights, bias = model.coef_.astype(np.float32), model.intercept_.astype(np.float32)
    if len(model.classes_) == 2:
        weights, bias = np.vstack([-weights / 2, weights / 2]), np.concatenate([-bias / 2, bias / 2])
    return Fit(weights, bias, tuple(str(label) for label in model.classes_))


def fit_exemplars(embed: Embed, exemplars: Exemplars, c: float) -> Fit:
    """Embed the exemplars and fit the logistic regression on them."""
    return fit_matrix(embed_all(embed, exemplars.texts), exemplars.labels, c)


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
                   tuple(str(label) for label in stored["labels"]))


def load_fit(embedder: object, embed: Embed, exemplars: Exemplars, c: float, *,
             packaged: Path, cache: Path | None,
             fit: Callable[[Embed, Exemplars, float], Fit] = fit_exemplars) -> Fit:
    """The packaged fit when it matches, else the one cached under `cache`, else a new one (cached)."""
    key = fit_key(embedder, exemplars, c)
    cached = cache / f"{key}.npz" if cache is not None and key else None
    found = read_fit(packaged, key) or (read_fit(cached, key) if cached else None)
    if found is not None:
        return found
    made = fit(embed, exemplars, c)
    if cached is not None and key is not None:
        try:
            write_fit(cached, key, made)
        except OSError as exc:  # a read-only cache only costs start-up time
            logger.warning("exemplar classifier cache not written: %s", exc)
    return made
