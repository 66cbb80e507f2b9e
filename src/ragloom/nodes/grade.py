"""The grade node (CRAG's evaluator): do the retrieved passages answer the *original* question?

Each of the best `grade.top_k` passages gets a relevance in [0, 1] and a short reason; a round's
verdict is `correct` (the best passage is relevant), `incorrect` (none is) or `ambiguous`. With a
chat model the relevances come from one structured call; without one (or when the call fails) the
offline grader blends the embedding similarity of question and passage with the share of the
question's content terms the passage contains. The trace names which grader ran.

Across the rounds of a loop the working set is the best-graded round so far (`best_round`), its
ranking first and the other round's unseen passages after: a rewrite that retrieves worse never
replaces what the question itself found, one that retrieves better does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.assemble import fit_budget
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fusion_math import dedup
from ragloom.nodes.text import clip, content_words, tokenize
from ragloom.nodes.trace import StageClock, log_once
from ragloom.providers.chat import complete_structured
from ragloom.settings import GradeSettings
from ragloom.state import RagState, Round, ScoredChunk, Verdict

STAGE = "grade"
SEMANTIC_WEIGHT = 0.6
"""Share of the embedding similarity in the offline relevance (the rest: term coverage)."""
PASSAGE_CHARS = 700
LLM_SYSTEM = (
    "You grade retrieved passages for a question. For each numbered passage give relevance 1.0 "
    "when it contains the answer, 0.5 when it is related but does not answer, 0.0 when it is "
    "unrelated, and a reason of a few words. Reply with JSON: "
    '{"passages": [{"marker": 1, "relevance": 1.0, "reason": "..."}]}'
)


class PassageGrade(BaseModel):
    """The grader's view of one passage."""

    marker: int
    relevance: float = Field(ge=0.0, le=1.0)
    reason: str = ""


class GradeReply(BaseModel):
    """The structured reply of the LLM grader."""

    passages: list[PassageGrade]


def passage_vectors(passages: Sequence[ScoredChunk], deps: RagDeps) -> np.ndarray:
    """Unit vectors of the passages: stored ones where the text is the stored chunk, else embedded."""
    stored = deps.index.get_embeddings([p.chunk.id for p in passages]) if passages else {}
    missing = [p.chunk.text for p in passages if p.chunk.id not in stored]
    fresh = iter(deps.embedder.embed_array(missing)) if missing else iter(())
    rows = [np.asarray(stored[p.chunk.id], dtype=np.float32) if p.chunk.id in stored else next(fresh)
            for p in passages]
    matrix = np.stack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def term_coverage(question: str, text: str) -> float:
    """Share of the question's content terms (stemmed) that occur in text."""
    asked = set(tokenize(question))
    return len(asked & set(tokenize(text))) / len(asked) if asked else 0.0


def offline_relevance(question: str, passages: Sequence[ScoredChunk],
                      deps: RagDeps) -> list[tuple[float, float, float]]:
    """(relevance, similarity, coverage) per passage, relevance = blend of the other two."""
    if not passages:
        return []
    query = deps.embedder.embed_queries([question])[0]
    query = np.asarray(query, dtype=np.float32)
    query = query / (np.linalg.norm(query) or 1.0)
    similarity = passage_vectors(passages, deps) @ query
    graded = []
    for scored, sim in zip(passages, similarity, strict=True):
        coverage = term_coverage(question, scored.chunk.text)
        relevance = SEMANTIC_WEIGHT * max(0.0, float(sim)) + (1 - SEMANTIC_WEIGHT) * coverage
        graded.append((round(relevance, 4), round(float(sim), 4), round(coverage, 4)))
    return graded


def missing_terms(question: str, passages: Sequence[ScoredChunk]) -> list[str]:
    """The question's content words that no graded passage contains (the vocabulary gap)."""
    present = set(tokenize(" ".join(p.chunk.text for p in passages)))
    return [w for w in dict.fromkeys(content_words(question)) if not set(tokenize(w)) <= present]


def verdict_of(relevances: Sequence[float], settings: GradeSettings) -> str:
    """`correct` when the best passage clears grade.correct, `incorrect` when none clears
    grade.incorrect, `ambiguous` in between (and for no passages: `incorrect`)."""
    best = max(relevances, default=0.0)
    if best >= settings.correct:
        return "correct"
    return "incorrect" if best < settings.incorrect else "ambiguous"


def _llm_grades(question: str, passages: Sequence[ScoredChunk], deps: RagDeps,
                clock: StageClock) -> list[PassageGrade] | None:
    """The LLM grader's per-passage grades in marker order; None (traced) when unusable."""
    blocks = "\n\n".join(f"[{i}] {clip(p.chunk.text, PASSAGE_CHARS)}"
                         for i, p in enumerate(passages, start=1))
    prompt = f"Question: {question}\n\nPassages:\n\n{blocks}\n\nGrade every passage."
    try:
        reply = complete_structured(deps.chat, LLM_SYSTEM, prompt, GradeReply, stage="grade")  # type: ignore[arg-type]
    except ChatUnavailableError as exc:
        clock.note(fallback=f"heuristic: {exc.what}")
        return None
    by_marker = {g.marker: g for g in reply.passages} if reply else {}
    if not reply or not all(m in by_marker for m in range(1, len(passages) + 1)):
        clock.note(fallback="heuristic: the model's grades were unusable")
        return None
    return [by_marker[m] for m in range(1, len(passages) + 1)]


def _grader(deps: RagDeps, clock: StageClock) -> str:
    """The grader that can run: `llm` needs a chat model (else the heuristic, logged once)."""
    wanted = deps.settings.grade.grader
    if wanted == "auto":
        return "llm" if deps.chat is not None else "heuristic"
    if wanted == "llm" and deps.chat is None:
        log_once("grade.no-chat", "no chat model: the corrective grader is the offline heuristic")
        clock.note(fallback="heuristic: the llm grader needs a chat model")
        return "heuristic"
    return wanted


def keep_best(state: RagState, current: Round, deps: RagDeps) -> tuple[Round, list[ScoredChunk]]:
    """The better of this round and the best before it (a later round must grade strictly
    better), and the working set: its passages, then the other round's, cut to top_n and fitted
    to the assemble budget."""
    best = state.get("best_round")
    kept, other = (current, best) if best is None or current.score > best.score else (best, current)
    merged = dedup([*kept.passages, *(other.passages if other else [])])
    top_n = state.get("top_n") or deps.settings.rerank.top_n
    budget = deps.settings.assemble
    working, _, _ = fit_budget(merged[:top_n], budget.token_budget, budget.chars_per_token)
    return kept, working


def _relevances(question: str, passages: list[ScoredChunk], deps: RagDeps, clock: StageClock,
                update: dict[str, Any]) -> tuple[str, list[float], list[str]]:
    """(grader that ran, relevance per passage, reason per passage)."""
    grader = _grader(deps, clock)
    grades = _llm_grades(question, passages, deps, clock) if grader == "llm" and passages else None
    if grades is not None:
        return grader, [g.relevance for g in grades], [g.reason for g in grades]
    if grader == "llm" and passages:
        update["best_effort"] = True
    offline = offline_relevance(question, passages, deps)
    return ("heuristic", [r for r, _, _ in offline],
            [f"similarity {s:.2f}, term coverage {c:.2f}" for _, s, c in offline])


def grade(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Grade the new round's best passages against the original question; keep the best round."""
    settings = deps.settings.grade
    question = state["question"]
    found = state.get("passages") or []
    passages = found[: settings.top_k]
    update: dict[str, Any] = {}
    with StageClock(STAGE) as clock:
        grader, relevances, reasons = _relevances(question, passages, deps, clock, update)
        score = max(relevances, default=0.0)
        current = Round(iteration=state.get("iterations", 0),
                        probe=state.get("probe") or question,
                        verdict=verdict_of(relevances, settings), score=score, passages=found,
                        relevance={p.chunk.id: r for p, r in zip(passages, relevances,
                                                                  strict=True)})
        kept, working = keep_best(state, current, deps)
        gap = missing_terms(question, passages)
        best = int(np.argmax(relevances)) + 1 if relevances else 0
        rationale = (f"best passage [{best}] relevance {score:.2f} ({reasons[best - 1]})"
                     if relevances else "no passages retrieved")
        if gap:
            rationale += f"; not found: {', '.join(gap)}"
        if kept is not current:
            rationale += f"; round {kept.iteration} kept (graded {kept.score:.2f})"
        clock.note(grader=grader, verdict=current.verdict, graded=len(passages),
                   relevance=[round(r, 3) for r in relevances], missing_terms=gap,
                   kept_round=kept.iteration, kept_verdict=kept.verdict)
    update.update({
        "passages": working,
        "best_round": kept,
        "relevance": kept.relevance,
        "missing_terms": gap,
        "verdicts": [Verdict(stage=STAGE, verdict=kept.verdict, score=kept.score,
                             reason=rationale)],
        "trace": clock.trace(),
    })
    return update
