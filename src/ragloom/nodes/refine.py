"""The refine node (CRAG's knowledge refinement, for `ambiguous` grades).

Each passage is split into knowledge strips (sentences); strips relevant to the original question
are kept, adjacent kept strips joined into one span, the rest dropped. A span stays a citation of
its original chunk (same chunk id) with the span's exact offsets, so `[n]` still resolves to the
source text. The working set is never emptied: when no strip clears the floor, the best one stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.grade import SEMANTIC_WEIGHT, term_coverage
from ragloom.nodes.text import Sentence, split_sentences
from ragloom.nodes.trace import StageClock
from ragloom.state import RagState, ScoredChunk

STAGE = "refine"


def _strip_scores(question: str, strips: Sequence[str], deps: RagDeps) -> list[float]:
    """Offline relevance of each strip: embedding similarity blended with term coverage."""
    if not strips:
        return []
    vectors = deps.embedder.embed_array([question, *strips])
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
    """Keep the question-relevant knowledge strips of every passage."""
    passages = state.get("passages") or []
    floor = deps.settings.grade.strip_relevance
    with StageClock(STAGE) as clock:
        sentences = [split_sentences(p.chunk.text) for p in passages]
        flat = [s.text for group in sentences for s in group]
        scores = iter(_strip_scores(state["question"], flat, deps))
        scored = [[(next(scores), s) for s in group] for group in sentences]
        refined: list[ScoredChunk] = []
        for passage, group in zip(passages, scored, strict=True):
            kept = [s for score, s in group if score >= floor]
            refined.extend(spans(passage, kept))
        if not refined and flat:
            best = max(((score, i, s) for i, group in enumerate(scored) for score, s in group),
                       key=lambda t: t[0])
            refined = spans(passages[best[1]], [best[2]])
            clock.note(kept_best_only=True)
        clock.note(passages_in=len(passages), strips=len(flat), spans_out=len(refined),
                   strip_floor=floor,
                   chars_in=sum(len(p.chunk.text) for p in passages),
                   chars_out=sum(len(p.chunk.text) for p in refined))
    return {"passages": refined or list(passages), "trace": clock.trace()}

