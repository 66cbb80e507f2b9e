"""Claim support: the one rule that decides whether passages support a claim.

Used by the groundedness node, the answer repair step of the generate node, the evaluation judge
and the corrective graph. A claim is supported when

- every number it states appears in the evidence (`EUR 4.99` is not supported by `3.99`), and
- its support score reaches `SUPPORTED`: the share of the claim's stemmed content tokens found in
  the evidence (lexical coverage), blended half and half with the best cosine similarity between
  the claim and one sentence of the evidence when an embedder is given (paraphrases keep support,
  topic-word overlap alone does not).

The evidence is the passages taken together (a claim may combine two cited passages); to ask
which single passage supports a claim, score each one on its own (`SupportScorer.best`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ragloom.nodes.text import strip_markers, tokenize
from ragloom.sentences import split_sentences

if TYPE_CHECKING:
    from ragloom.providers.embeddings import TextEmbedder

SUPPORTED = 0.6
"""Support score at which a claim counts as supported."""
SEMANTIC_WEIGHT = 0.5
"""Weight of the best claim-to-sentence cosine in the support score when an embedder is given."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")


class Support(NamedTuple):
    """How well evidence supports a claim: the score and what it was made of."""

    score: float
    lexical: float
    semantic: float | None
    missing_numbers: frozenset[str]

    @property
    def supported(self) -> bool:
        """Whether the score reaches the shared threshold."""
        return self.score >= SUPPORTED


def numbers_of(text: str) -> set[str]:
    """The numbers written in a text (`3.99`; `1,000` as `1000`; `2025-09-02` gives 2025, 09, 02)."""
    return set(_NUMBER.findall(_THOUSANDS.sub("", text)))


def coverage(claim: str, evidence: str) -> float:
    """Share of the claim's stemmed content tokens present in the evidence (0 for no tokens)."""
    tokens = set(tokenize(claim))
    if not tokens:
        return 0.0
    return len(tokens & set(tokenize(evidence))) / len(tokens)


def _combine(lexical: float, semantic: float | None, missing: frozenset[str]) -> Support:
    """The support score from its parts: zero when a number is missing."""
    if missing:
        return Support(0.0, lexical, semantic, missing)
    score = lexical if semantic is None else (
        (1.0 - SEMANTIC_WEIGHT) * lexical + SEMANTIC_WEIGHT * semantic)
    return Support(score, lexical, semantic, missing)


class SupportScorer:
    """Score many claims against a fixed set of passages, embedding passage sentences once."""

    def __init__(self, passages: Sequence[str], embedder: TextEmbedder | None = None) -> None:
        self.passages = [strip_markers(p) for p in passages]
        self.embedder = embedder
        self._sentences: list[np.ndarray] | None = None

    def _sentence_vectors(self) -> list[np.ndarray]:
        """Per passage, the unit vectors of its sentences (embedded in one batch, on first use)."""
        if self._sentences is None:
            assert self.embedder is not None
            split = [[s.text for s in split_sentences(p)] or [p] for p in self.passages]
            flat = [s for sentences in split for s in sentences]
            vectors = self.embedder.embed_array(flat) if flat else np.zeros((0, 1))
            self._sentences, at = [], 0
            for sentences in split:
                self._sentences.append(vectors[at:at + len(sentences)])
                at += len(sentences)
        return self._sentences

    def _semantic(self, claim_vector: np.ndarray, indices: Sequence[int]) -> float:
        """Best cosine between the claim and one sentence of the chosen passages, in [0, 1]."""
        vectors = self._sentence_vectors()
        best = max((float(np.max(vectors[i] @ claim_vector)) for i in indices if len(vectors[i])),
                   default=0.0)
        return min(1.0, max(0.0, best))

    def _claim_vector(self, claim: str) -> np.ndarray | None:
        """The claim's unit vector, or None without an embedder."""
        return None if self.embedder is None else self.embedder.embed_array([claim])[0]

    def assess(self, claim: str, indices: Sequence[int] | None = None,
               claim_vector: np.ndarray | None = None) -> Support:
        """Support of the claim by the chosen passages taken together (default: all of them)."""
        chosen = range(len(self.passages)) if indices is None else indices
        evidence = "\n".join(self.passages[i] for i in chosen)
        text = strip_markers(claim)
        missing = frozenset(numbers_of(text) - numbers_of(evidence))
        lexical = coverage(text, evidence)
        semantic = None
        if self.embedder is not None and chosen:
            vector = claim_vector if claim_vector is not None else self._claim_vector(text)
            semantic = self._semantic(vector, chosen)  # type: ignore[arg-type]
        return _combine(lexical, semantic, missing)

    def best(self, claim: str, candidates: Sequence[int] | None = None) -> tuple[int, Support]:
        """The single passage (index) that supports the claim best, and its support."""
        pool = list(range(len(self.passages)) if candidates is None else candidates)
        if not pool:
            return -1, Support(0.0, 0.0, None, frozenset())
        vector = self._claim_vector(strip_markers(claim))
        scored = [(i, self.assess(claim, [i], vector)) for i in pool]
        return max(scored, key=lambda item: item[1].score)


def claim_support(claim: str, passages: Sequence[str], *,
                  embedder: TextEmbedder | None = None) -> float:
    """Support score in [0, 1] of a claim by the passages taken together (0 if a number is missing);
    a claim is supported when the score reaches `SUPPORTED`."""
    if not passages:
        return 0.0
    return SupportScorer(passages, embedder).assess(claim).score


def is_supported(claim: str, passages: Sequence[str], *,
                 embedder: TextEmbedder | None = None) -> bool:
    """Whether the passages taken together support the claim under the shared rule."""
    return claim_support(claim, passages, embedder=embedder) >= SUPPORTED
