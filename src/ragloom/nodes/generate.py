"""The generate node: a grounded answer with `[n]` markers, from a chat model or extractively."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import NamedTuple, Protocol

import numpy as np

from ragloom.nodes.assemble import render_context
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.text import (
    clip,
    filter_markers,
    markers_in,
    split_sentences,
    strip_markers,
    tokenize,
    words,
)
from ragloom.nodes.trace import StageClock, log_once
from ragloom.providers.chat import complete
from ragloom.state import Citation, RagState, ScoredChunk

IDK = "I don't know"
NO_CONTEXT = "I don't know: no passages were retrieved for this question."
SNIPPET_CHARS = 300
MIN_RELEVANCE = 0.3
RELATIVE_RELEVANCE = 0.7
SEMANTIC_WEIGHT = 0.6
RANK_PRIOR = 0.1
REDUNDANT_JACCARD = 0.7
MIN_SENTENCE_WORDS = 3

SYSTEM_PROMPT = (
    "You answer questions using only the numbered passages you are given.\n"
    "- After every sentence or claim, put the marker of the passage that supports it, like [1] "
    "or [2]; cite only passages that really support the claim.\n"
    "- Use only what the passages state; add no outside knowledge.\n"
    f"- If the passages do not contain the answer, reply exactly: {IDK}\n"
    "- Be concise."
)

_BULLET = re.compile(r"^(?:[-*•]|#+)\s+")
_TRAILING_PUNCT = re.compile(r"^(.*?)([.!?]+['\"”’)]*)$", re.DOTALL)


class _Candidate(NamedTuple):
    """A sentence considered by the extractive generator."""

    score: float
    relevance: float
    marker: int
    text: str
    tokens: frozenset[str]


class SentenceEmbedder(Protocol):
    """What the extractive generator needs from an embedder: unit vectors for texts."""

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts into unit vectors."""


def _idf(question_terms: set[str], passage_terms: Sequence[set[str]]) -> dict[str, float]:
    """IDF-ish weights of the question terms over the passage set (absent terms weigh most)."""
    n = len(passage_terms)
    weights: dict[str, float] = {}
    for term in question_terms:
        df = sum(1 for terms in passage_terms if term in terms)
        weights[term] = math.log(1.0 + n / df) if df else math.log(1.0 + 2.0 * n)
    return weights


def _sentences(passages: Sequence[ScoredChunk]) -> list[tuple[int, str, str]]:
    """(marker, sentence, sentence with its heading for context) of every passage; questions
    (FAQ headings) are never answers, so they are left out."""
    found: list[tuple[int, str, str]] = []
    for marker, scored in enumerate(passages, start=1):
        section = str(scored.chunk.metadata.get("section") or scored.chunk.metadata.get("title") or "")
        heading = section.split(" > ")[-1]
        for sentence in split_sentences(scored.chunk.text):
            text = _BULLET.sub("", " ".join(strip_markers(sentence.text).split()))
            if len(words(text)) >= MIN_SENTENCE_WORDS and not text.endswith("?"):
                found.append((marker, text, f"{heading}: {text}" if heading else text))
    return found


def _similarities(question: str, contexts: list[str], embedder: SentenceEmbedder | None) -> list[float]:
    """Cosine similarity of each sentence (with its heading) to the question; zeros offline."""
    if embedder is None or not contexts:
        return [0.0] * len(contexts)
    vectors = embedder.embed_array([question, *contexts])
    return [float(v) for v in vectors[1:] @ vectors[0]]


def _candidates(question: str, passages: Sequence[ScoredChunk],
                embedder: SentenceEmbedder | None) -> list[_Candidate]:
    """Score sentences by weighted question-term coverage, semantic similarity and rank."""
    asked = set(tokenize(question))
    if not asked:
        return []
    weights = _idf(asked, [set(tokenize(p.chunk.text)) for p in passages])
    total = sum(weights.values())
    sentences = _sentences(passages)
    similarity = _similarities(question, [context for _, _, context in sentences], embedder)
    found: list[_Candidate] = []
    for (marker, text, _), sim in zip(sentences, similarity):
        tokens = frozenset(tokenize(text))
        coverage = sum(weights[t] for t in asked & tokens) / total
        relevance = coverage if embedder is None else SEMANTIC_WEIGHT * sim + (1 - SEMANTIC_WEIGHT) * coverage
        found.append(_Candidate(relevance + RANK_PRIOR / marker, relevance, marker, text, tokens))
    return sorted(found, key=lambda c: -c.score)


def _cite(sentence: str, marker: int) -> str:
    """Place the marker before the sentence's final punctuation."""
    match = _TRAILING_PUNCT.match(sentence)
    if match:
        return f"{match.group(1)} [{marker}]{match.group(2)}"
    return f"{sentence} [{marker}]"


def _redundant(tokens: frozenset[str], chosen: Sequence[_Candidate]) -> bool:
    """True when tokens mostly repeat an already chosen sentence."""
    for other in chosen:
        union = tokens | other.tokens
        if union and len(tokens & other.tokens) / len(union) >= REDUNDANT_JACCARD:
            return True
    return False


def extractive_answer(
    question: str,
    passages: Sequence[ScoredChunk],
    max_sentences: int,
    max_chars: int,
    embedder: SentenceEmbedder | None = None,
) -> str:
    """Pick the passage sentences most relevant to the question, each with its marker, or IDK.

    Relevance is weighted question-term coverage, blended with the embedding similarity of the
    sentence (prefixed by its section heading) when an embedder is given.
    """
    ranked = _candidates(question, passages, embedder)
    if not ranked or ranked[0].relevance < MIN_RELEVANCE:
        return IDK
    floor = max(MIN_RELEVANCE, RELATIVE_RELEVANCE * ranked[0].relevance)
    chosen: list[_Candidate] = []
    parts: list[str] = []
    for candidate in ranked:
        if len(chosen) == max_sentences or candidate.relevance < floor:
            break
        if _redundant(candidate.tokens, chosen):
            continue
        room = max_chars - len(" ".join(parts)) - (1 if parts else 0)
        cited = _cite(candidate.text, candidate.marker)
        if len(cited) > room:
            if parts:
                continue
            limit = room - len(f" [{candidate.marker}]") - 1
            cited = _cite(clip(candidate.text, limit) + "…", candidate.marker)
        chosen.append(candidate)
        parts.append(cited)
    return " ".join(parts)


def check_markers(draft: str, passage_count: int) -> tuple[str, list[int], list[int]]:
    """Drop markers that resolve to no passage; return (draft, cited markers, removed markers)."""
    cleaned, removed = filter_markers(draft, range(1, passage_count + 1))
    cited = sorted(set(markers_in(cleaned)))
    return cleaned.strip(), cited, removed


def build_citations(passages: Sequence[ScoredChunk], markers: Sequence[int]) -> list[Citation]:
    """Resolve markers (1-based ranks) to citations."""
    citations: list[Citation] = []
    for marker in markers:
        scored = passages[marker - 1]
        chunk = scored.chunk
        citations.append(
            Citation(
                marker=marker,
                chunk_id=chunk.id,
                source_id=chunk.source_id,
                snippet=clip(chunk.text, SNIPPET_CHARS),
                score=scored.score,
                score_origin=scored.score_origin,
                start=chunk.start,
                end=chunk.end,
                metadata=dict(chunk.metadata),
            )
        )
    return citations


def user_prompt(question: str, passages: Sequence[ScoredChunk], ordering: str) -> str:
    """The user turn: passages in layout order, then the question."""
    context = render_context(passages, ordering)
    return f"Passages:\n\n{context}\n\nQuestion: {question}\n\nAnswer with [n] markers:"


def is_abstention(draft: str) -> bool:
    """True when the draft declines to answer."""
    return draft.strip().lower().startswith(IDK.lower())


def _draft(state: RagState, deps: RagDeps, passages: list[ScoredChunk], clock: StageClock) -> str:
    """Generate the raw draft with the chat model, or extractively without one."""
    settings = deps.settings
    if deps.chat is not None:
        clock.note(generator="chat")
        prompt = user_prompt(state["question"], passages, settings.assemble.ordering)
        reply = complete(deps.chat, SYSTEM_PROMPT, prompt)
        if not reply:
            clock.note(empty_reply=True)
        return reply or IDK
    log_once("generate.extractive", "no chat model: answers are extracted from the passages")
    clock.note(generator="extractive", offline=True)
    return extractive_answer(
        state["question"], passages, settings.generate.max_sentences, settings.generate.max_chars,
        embedder=deps.embedder,
    )


def generate(state: RagState, deps: RagDeps) -> dict:
    """Write the cited answer draft from the assembled passages."""
    passages = state.get("passages") or []
    with StageClock("generate") as clock:
        if not deps.settings.generate.enabled:
            citations = build_citations(passages, range(1, len(passages) + 1))
            trace = clock.skip("generation disabled (retrieval-only)", citations=len(citations))
            return {"draft": "", "citations": citations, "trace": trace}
        if not passages:
            clock.note(generator="none", reason="no passages: no model call")
            return {"draft": NO_CONTEXT, "citations": [], "trace": clock.trace()}
        draft, cited, removed = check_markers(_draft(state, deps, passages, clock), len(passages))
        clock.note(cited=cited, removed_markers=removed, abstained=is_abstention(draft))
    return {"draft": draft, "citations": build_citations(passages, cited), "trace": clock.trace()}
