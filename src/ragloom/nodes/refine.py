"""The refine node (CRAG's knowledge refinement, for `ambiguous` grades).

Each graded passage is split into knowledge strips (sentences); strips relevant to the original
question are kept, adjacent kept strips joined into one span, the rest dropped. A span stays a
citation of its original chunk (same chunk id) with the span's exact offsets, so `[n]` still
resolves to the source text. No passage is emptied (and so none leaves the ranking): when none of
its strips clears the floor, its best strip stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.grade import SEMANTIC_WEIGHT, term_coverage
from ragloom.nodes.trace import StageClock
from ragloom.sentences import Sentence, split_sentences
from ragloom.state import RagState, ScoredChunk

STAGE = "refine"
EMBED_BATCH = 16
"""Texts per embedding call: the size up to which the ONNX query encoder serves a batch."""


def _strip_scores(question: str, strips: Sequence[str], deps: RagDeps) -> list[float]:
    """Offline relevance of each strip of one passage: embedding similarity blended with term
    coverage (embedded in batches small enough for the ONNX query encoder)."""
    if not strips:
        return []
    texts = [question, *strips]
    vectors = np.concatenate([deps.embedder.embed_array(texts[i:i + EMBED_BATCH])
                              for i in range(0, len(texts), EMBED_BATCH)])
    similarity = vectors[1:] @ vectors[0]
    return [SEMANTIC_WEIGHT * max(0.0, float(sim)) + (1 - SEMANTIC_WEIGHT)
            * term_coverage(question, text) for sim, text in zip(similarity, strips, strict=True)]


def spans(passage: ScoredChunk, kept: Sequence[Sentence]) -> list[ScoredChunk]:
    """Runs of adjacent kept sentences as passages of the same chunk with exact offsets."""
    chunk = passage.chunk
    runs: list[list[Sentence]] = []
    for sentence in kept:
        if runs and not chunk.text[runs[-1][-1].end:sentence.start].strip():
            runs[-1].append(sentence)
        else:
            runs.append([sentence])
    out = []
    for run in runs:
        begin, end = run[0].start, run[-1].end
        part = chunk.model_copy(update={"text": chunk.text[begin:end], "start": chunk.start + begin,
                                        "end": chunk.start + end})
        out.append(passage.model_copy(update={"chunk": part}))
    return out


def refine(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Keep the question-relevant knowledge strips of the graded passages (the rest follow)."""
    passages = state.get("passages") or []
    graded, rest = passages[: deps.settings.grade.top_k], passages[deps.settings.grade.top_k:]
    floor = deps.settings.grade.strip_relevance
    with StageClock(STAGE) as clock:
        sentences = [split_sentences(p.chunk.text) for p in graded]
        scored = [list(zip(_strip_scores(state["question"], [s.text for s in group], deps), group,
                           strict=True)) for group in sentences]
        refined: list[ScoredChunk] = []
        best_only = 0
        for passage, group in zip(graded, scored, strict=True):
            kept = [s for score, s in group if score >= floor]
            if not kept and group:
                kept, best_only = [max(group, key=lambda pair: pair[0])[1]], best_only + 1
            refined.extend(spans(passage, kept) if kept else [passage])
        clock.note(passages_in=len(graded), strips=sum(map(len, sentences)),
                   spans_out=len(refined), strip_floor=floor, best_strip_only=best_only,
                   unrefined=len(rest),
                   chars_in=sum(len(p.chunk.text) for p in graded),
                   chars_out=sum(len(p.chunk.text) for p in refined))
    return {"passages": refined + rest, "trace": clock.trace()}

