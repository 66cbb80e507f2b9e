"""A classifier over embedded, labelled exemplars: the mechanism of the semantic detectors.

Shared by the input guard (`ragloom.guardrails.semantic`: questions; a logistic regression) and
the injection screen (`ragloom.ingestion.injection.semantic`: document windows; a logistic
regression or a one-hidden-layer perceptron). Exemplars are texts with one label each; the fit
(one weight row and bias per label, after an optional ReLU hidden layer) is made once with
scikit-learn (imported here only when fitting: deterministic lbfgs, or adam from a fixed seed)
and kept as an `.npz` keyed by the embedding model, the exemplars' digest and the head (`C`, and
the perceptron's settings). A detector ships the fit of its packaged exemplars, so scoring needs
no embedding of the exemplars; any other fit is written under a cache directory. Scoring is one
or two matrix products and a softmax over the rows the caller supplies (embeddings; for the
injection screen also hashed character n-grams, which it makes with scikit-learn).
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
    """A fitted classifier: one weight row and bias per label (softmax over the rows), over the
    input or, when `hidden` is set, over a ReLU hidden layer (`hidden` rows, `hidden_bias`)."""

    weights: np.ndarray
    bias: np.ndarray
    labels: tuple[str, ...]
    hidden: np.ndarray | None = None
    hidden_bias: np.ndarray | None = None

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """One row per embedding: the probability of each label (columns in `labels` order)."""
        rows = np.atleast_2d(matrix)
        if self.hidden is not None:
            rows = np.maximum(rows @ self.hidden.T + self.hidden_bias, 0.0)
        logits = rows @ self.weights.T + self.bias
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return np.asarray(exp / exp.sum(axis=1, keepdims=True))


def model_name(embedder: object) -> str | None:
    """The embedding model's name (`embedder.profile.model`), or None for an unnamed embedder."""
    model = getattr(getattr(embedder, "profile", None), "model", None)
    return str(model) if model else None


def fit_key(embedder: object, exemplars: Exemplars, c: float, head: str = "") -> str | None:
    """What a stored fit must match: the embedding model, the exemplars, C and any other setting
    of the head (None: unnamed model)."""
    model = model_name(embedder)
    if model is None:
        return None
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', model)}-{exemplars.digest()}-c{c:g}{head}"


def embed_all(embed: Embed, texts: Sequence[str]) -> np.ndarray:
    """Embed texts in batches of `BATCH`."""
    return np.concatenate([np.asarray(embed(list(texts[i:i + BATCH])))
                           for i in range(0, len(texts), BATCH)])


def _two_rows(weights: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One logit's weights as two softmax rows (-w/2, +w/2): the softmax is then its sigmoid."""
    return np.vstack([-weights / 2, weights / 2]), np.concatenate([-bias / 2, bias / 2])


def fit_matrix(matrix: np.ndarray, labels: Sequence[str], c: float) -> Fit:
    """Fit the logistic regression (scikit-learn, balanced classes) on embedded exemplars.

    A two-label fit is stored as two rows (-w/2, +w/2), so its softmax is the regression's sigmoid.
    """
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    model.fit(matrix, np.array(labels))
    weights, bias = model.coef_.astype(np.float32), model.intercept_.astype(np.float32)
    if len(model.classes_) == 2:
        weights, bias = _two_rows(weights, bias)
    return Fit(weights, bias, tuple(str(label) for label in model.classes_))


def fit_perceptron(matrix: np.ndarray, labels: Sequence[str], hidden: int, alpha: float,
                   epochs: int, seed: int = 0) -> Fit:
    """Fit a one-hidden-layer ReLU perceptron (scikit-learn, adam from `seed`, balanced classes
    by sample weight, L2 penalty alpha, `epochs` passes) on two labels of embedded exemplars."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning  # type: ignore[import-untyped]
    from sklearn.neural_network import MLPClassifier  # type: ignore[import-untyped]

    y = np.array(labels)
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) != 2:
        raise ValueError(f"a perceptron fit needs two labels, not {len(classes)}")
    weight = (len(y) / (2 * counts))[np.searchsorted(classes, y)]
    model = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=alpha, max_iter=epochs,
                          random_state=seed)
    with warnings.catch_warnings():  # a fixed number of passes is the setting, not a failure
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(matrix, y, sample_weight=weight)
    weights, bias = _two_rows(model.coefs_[1].T.astype(np.float32),
                              model.intercepts_[1].astype(np.float32))
    return Fit(weights, bias, tuple(str(label) for label in model.classes_),
               model.coefs_[0].T.astype(np.float32), model.intercepts_[0].astype(np.float32))


def fit_exemplars(embed: Embed, exemplars: Exemplars, c: float) -> Fit:
    """Embed the exemplars and fit the logistic regression on them."""
    return fit_matrix(embed_all(embed, exemplars.texts), exemplars.labels, c)


def write_fit(path: Path, key: str, fit: Fit) -> None:
    """Store a fit with the key it was made for."""
    path.parent.mkdir(parents=True, exist_ok=True)
    hidden, hidden_bias = (  # a linear fit is stored with an empty hidden layer
        (fit.hidden, fit.hidden_bias) if fit.hidden is not None and fit.hidden_bias is not None
        else (np.zeros((0, 0), np.float32), np.zeros(0, np.float32)))
    np.savez(path, key=np.array(key), weights=fit.weights, bias=fit.bias,
             labels=np.array(fit.labels), hidden=hidden, hidden_bias=hidden_bias)


def read_fit(path: Path, key: str | None) -> Fit | None:
    """The fit stored at path when it was made for this key, else None."""
    if key is None or not path.exists():
        return None
    with np.load(path) as stored:
        if str(stored["key"]) != key:
            return None
        layer = ((stored["hidden"].astype(np.float32), stored["hidden_bias"].astype(np.float32))
                 if "hidden" in stored.files and stored["hidden"].size else (None, None))
        return Fit(stored["weights"].astype(np.float32), stored["bias"].astype(np.float32),
                   tuple(str(label) for label in stored["labels"]), *layer)


def load_fit(embedder: object, embed: Embed, exemplars: Exemplars, c: float, *,
             packaged: Path, cache: Path | None,
             fit: Callable[[Embed, Exemplars, float], Fit] = fit_exemplars, head: str = "") -> Fit:
    """The packaged fit when it matches, else the one cached under `cache`, else a new one (cached);
    head names the head's settings other than C (part of the key)."""
    key = fit_key(embedder, exemplars, c, head)
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
