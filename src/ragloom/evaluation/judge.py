"""Judges for the RAGAS-style answer metrics: an LLM judge and a deterministic heuristic one.

Metrics (each in [0, 1], None when it does not apply to a case):

- faithfulness: share of the answer's claims (sentences) supported by a passage it was given.
- answer relevancy: how well the answer addresses the question (0 for a refusal, as in RAGAS).
- context precision: average precision of the ranked passages, a passage counting as relevant when
  it is useful for the reference answer (without a reference: when its document is judged relevant).
- context recall: share of the reference answer's claims attributable to the passages.
- citation validity: share of `[n]` markers that resolve to a citation whose passage supports the
  sentence carrying the marker.

The heuristic judge needs no model: a passage supports a claim under the pipeline's own shared rule
(`ragloom.nodes.support`: stemmed-token coverage blended with the best claim-to-sentence cosine
under the configured embedder, at least 0.6, and every number the claim states present);
relevancy is the cosine similarity of the question and the answer under the configured embedder. The LLM judge asks the configured chat model short JSON questions, one
call per metric and case; an unusable reply falls back to the heuristic for that item and is
counted in `fallbacks`. Every report names the judge that ran.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragloom.errors import ConfigError
from ragloom.evaluation.metrics import is_refusal
from ragloom.nodes.support import (
    SUPPORTED,
    SupportScorer,
    coverage,
    is_supported,
)
from ragloom.nodes.text import markers_in, strip_markers, tokenize
from ragloom.providers.chat import parse_json_reply
from ragloom.sentences import split_sentences

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from ragloom.providers.embeddings import TextEmbedder

    from ragloom.settings import RagSettings

REFERENCE_USEFUL = 0.5
"""Share of the reference answer's tokens a passage must hold to count as useful for it."""
JUDGES = ("auto", "heuristic", "llm")


@dataclass
class JudgeInput:
    """Everything a judge sees for one answered case."""

    question: str
    answer: str
    contexts: list[str]
    cited: dict[int, str] = field(default_factory=dict)
    reference: str | None = None
    expected: list[str] = field(default_factory=list)
    context_judged: list[bool] | None = None


@dataclass
class JudgeScores:
    """The judged metrics of one case, with citation counts."""

    faithfulness: float | None = None
    answer_relevancy: float | None = None
    context_precision: float | None = None
    context_recall: float | None = None
    citation_validity: float | None = None
    markers: int = 0
    unresolved_markers: int = 0
    unsupported_markers: int = 0
    uncited_claims: int = 0

    def metrics(self) -> dict[str, float | None]:
        """The metric values by report name."""
        return {
            "faithfulness": self.faithfulness,
            "answer_relevancy": self.answer_relevancy,
            "context_precision": self.context_precision,
            "context_recall": self.context_recall,
            "citation_validity": self.citation_validity,
        }


def claims_of(text: str) -> list[tuple[str, list[int]]]:
    """(claim without markers, its markers) for every sentence that has content words."""
    found = []
    for sentence in split_sentences(text):
        claim = strip_markers(sentence.text)
        if tokenize(claim):
            found.append((claim, markers_in(sentence.text)))
    return found


def supports(claim: str, passage: str, embedder: TextEmbedder | None = None) -> bool:
    """Heuristic support: the shared claim-support rule of the pipeline (numbers must match)."""
    return is_supported(claim, [passage], embedder=embedder)


def average_precision(relevant: Sequence[bool]) -> float:
    """RAGAS context precision: Σ precision@i · rel_i / number of relevant (0 when none)."""
    hits = 0
    total = 0.0
    for i, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


class Judge:
    """The shared grading logic; subclasses decide support, usefulness and relevancy."""

    name = "judge"
    kind = "base"

    def __init__(self) -> None:
        self.fallbacks = 0
        self.calls = 0

    # primitives -------------------------------------------------------
    def supported(self, claims: list[str], evidence: list[str]) -> list[bool]:
        """For each claim: is it supported by the evidence passages?"""
        raise NotImplementedError

    def pair_supported(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """For each (sentence, cited passage): does the passage support the sentence?"""
        raise NotImplementedError

    def relevancy(self, question: str, answer: str) -> float:
        """How well the answer addresses the question, in [0, 1]."""
        raise NotImplementedError

    def useful(self, question: str, reference: str, expected: list[str],
               contexts: list[str]) -> list[bool]:
        """For each context: is it useful for arriving at the reference answer?"""
        raise NotImplementedError

    def attributed(self, claims: list[str], contexts: list[str]) -> list[bool]:
        """For each reference claim: can it be attributed to the contexts?"""
        raise NotImplementedError

    # grading ----------------------------------------------------------
    def grade(self, item: JudgeInput) -> JudgeScores:
        """All judged metrics of one case."""
        scores = JudgeScores()
        refused = is_refusal(item.answer)
        claims = [] if refused else claims_of(item.answer)
        evidence = [*item.contexts, *item.cited.values()]
        if claims:
            verdicts = self.supported([c for c, _ in claims], evidence)
            scores.faithfulness = sum(verdicts) / len(verdicts)
        scores.answer_relevancy = 0.0 if refused else self.relevancy(item.question, item.answer)
        self._grade_citations(item, claims, scores)
        reference = (item.reference or "").strip()
        if item.contexts and (reference or item.expected):
            useful = self.useful(item.question, reference, item.expected, item.contexts)
            scores.context_precision = average_precision(useful)
        elif item.contexts and item.context_judged is not None:
            scores.context_precision = average_precision(item.context_judged)
        elif not item.contexts and (reference or item.context_judged):
            scores.context_precision = 0.0
        if reference and not is_refusal(reference):
            ref_claims = [c for c, _ in claims_of(reference)] or [reference]
            verdicts = self.attributed(ref_claims, item.contexts) if item.contexts else [False]
            scores.context_recall = sum(verdicts) / len(verdicts)
        return scores

    def _grade_citations(self, item: JudgeInput, claims: list[tuple[str, list[int]]],
                         scores: JudgeScores) -> None:
        pairs: list[tuple[str, str]] = []
        for claim, markers in claims:
            if not markers:
                scores.uncited_claims += 1
            for marker in markers:
                scores.markers += 1
                if marker in item.cited:
                    pairs.append((claim, item.cited[marker]))
                else:
                    scores.unresolved_markers += 1
        if not scores.markers:
            return
        supported = self.pair_supported(pairs) if pairs else []
        scores.unsupported_markers = len(pairs) - sum(supported)
        scores.citation_validity = sum(supported) / scores.markers


class HeuristicJudge(Judge):
    """Deterministic judge: token coverage for support, embedding cosine for relevancy."""

    kind = "heuristic"

    def __init__(self, embedder: TextEmbedder | None, embedder_name: str = "embedder",
                 cache_size: int = 4096) -> None:
        super().__init__()
        self.embedder = embedder
        semantic = f" blended with {embedder_name} sentence cosine" if embedder else ""
        self.name = (f"heuristic (support: shared claim-support rule, token coverage{semantic} "
                     f"≥ {SUPPORTED}, same numbers; relevancy: {embedder_name} cosine)")
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _vectors(self, texts: list[str]) -> list[np.ndarray]:
        assert self.embedder is not None
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            fresh = self.embedder.embed_array(missing)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._cache[text] = vector
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        with self._lock:
            return [self._cache[t] for t in texts]

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for texts, through the judge's cache (the support rule's embedder)."""
        return np.stack(self._vectors(texts)) if texts else np.zeros((0, 1), dtype=np.float32)

    def _support_embedder(self) -> HeuristicJudge | None:
        """The embedder the support rule uses: this judge's cache, or none offline."""
        return self if self.embedder is not None else None

    def cosine(self, a: str, b: str) -> float:
        """Cosine similarity of two texts under the embedder, clamped to [0, 1]."""
        va, vb = self._vectors([a, b])
        return float(min(1.0, max(0.0, float(va @ vb))))

    def supported(self, claims: list[str], evidence: list[str]) -> list[bool]:
        """Whether each claim is supported by the evidence (support rule, offline)."""
        if not evidence:
            return [False] * len(claims)
        scorer = SupportScorer(evidence, self._support_embedder())
        return [scorer.best(c)[1].supported for c in claims]

    def pair_supported(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """Whether each sentence is supported by its own passage (support rule)."""
        return [supports(sentence, passage, self._support_embedder())
                for sentence, passage in pairs]

    def relevancy(self, question: str, answer: str) -> float:
        """How well the answer addresses the question, in [0, 1]."""
        text = strip_markers(answer)
        if self.embedder is None:
            return coverage(question, text)
        return self.cosine(question, text)

    def useful(self, question: str, reference: str, expected: list[str],
               contexts: list[str]) -> list[bool]:
        """Whether each context holds the reference answer or an expected string."""
        wanted = [e.casefold() for e in expected if e.strip()]
        out = []
        for context in contexts:
            folded = " ".join(context.casefold().split())
            hit = bool(wanted) and any(" ".join(w.split()) in folded for w in wanted)
            out.append(hit or (bool(reference) and coverage(reference, context) >= REFERENCE_USEFUL))
        return out

    def attributed(self, claims: list[str], contexts: list[str]) -> list[bool]:
        """Whether each reference claim can be found in the contexts."""
        joined = "\n".join(contexts)
        folded = " ".join(joined.casefold().split())
        return [supports(c, joined, self._support_embedder())
                or " ".join(c.casefold().split()) in folded for c in claims]


def parse_verdicts(text: str, expected: int) -> list[bool] | None:
    """A {"verdicts": [1, 0, ...]} reply with exactly `expected` entries; None otherwise."""
    data = parse_json_reply(text, dict)
    if data is None:
        return None
    raw = data.get("verdicts")
    if not isinstance(raw, list) or len(raw) != expected:
        return None
    out: list[bool] = []
    for value in raw:
        if isinstance(value, dict):
            value = value.get("verdict")
        if isinstance(value, bool):
            out.append(value)
        elif isinstance(value, (int, float)) and value in (0, 1):
            out.append(bool(value))
        elif isinstance(value, str) and value.strip().lower() in ("yes", "no", "1", "0", "true", "false"):
            out.append(value.strip().lower() in ("yes", "1", "true"))
        else:
            return None
    return out


_VERDICTS = ('Reply with JSON only: {"verdicts": [1 or 0, ...]}, one entry per numbered item, '
             "in order, 1 meaning yes.")
FAITHFULNESS_PROMPT = ("You check statements against a context. For each numbered statement, "
                       "decide whether it can be directly inferred from the context. " + _VERDICTS)
CITATION_PROMPT = ("For each numbered pair, decide whether the passage supports the sentence. "
                   + _VERDICTS)
PRECISION_PROMPT = ("Given a question, its reference answer and numbered passages, decide for each "
                    "passage whether it was useful in arriving at the reference answer. " + _VERDICTS)
RECALL_PROMPT = ("Given a context and numbered statements from a reference answer, decide for each "
                 "statement whether it can be attributed to the context. " + _VERDICTS)
RELEVANCY_PROMPT = ("Write the question that the given answer responds to, and say whether the "
                    "answer is noncommittal (evasive, vague, or 'I don't know'). Reply with JSON "
                    'only: {"question": "...", "noncommittal": 1 or 0}.')


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {' '.join(item.split())}" for i, item in enumerate(items, start=1))


class LlmJudge(Judge):
    """RAGAS-style judge through the configured chat model, with a heuristic fallback per item."""

    kind = "llm"

    def __init__(self, chat: BaseChatModel, model_name: str, fallback: HeuristicJudge,
                 max_context_chars: int = 6000) -> None:
        super().__init__()
        self.chat = chat
        self.fallback = fallback
        self.max_context_chars = max_context_chars
        self.name = f"llm ({model_name}; RAGAS-style prompts; heuristic fallback)"

    def _ask(self, system: str, user: str) -> str:
        from ragloom.providers.chat import complete

        self.calls += 1
        try:
            return complete(self.chat, system, user, stage="judge")
        except Exception:  # noqa: BLE001 - a failed judge call falls back, counted
            return ""

    def _verdicts(self, system: str, user: str, n: int, fallback: Any) -> list[bool]:
        parsed = parse_verdicts(self._ask(system, user), n)
        if parsed is None:
            self.fallbacks += 1
            return fallback()
        return parsed

    def _context(self, texts: Sequence[str]) -> str:
        return "\n\n".join(texts)[: self.max_context_chars]

    def supported(self, claims: list[str], evidence: list[str]) -> list[bool]:
        """Whether each claim is supported by the evidence, as the model says."""
        user = f"Context:\n{self._context(evidence)}\n\nStatements:\n{_numbered(claims)}"
        return self._verdicts(FAITHFULNESS_PROMPT, user, len(claims),
                              lambda: self.fallback.supported(claims, evidence))

    def pair_supported(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """Whether each sentence is supported by its own passage, as the model says."""
        body = "\n\n".join(f"{i}. Sentence: {s}\n   Passage: {' '.join(p.split())[:1500]}"
                           for i, (s, p) in enumerate(pairs, start=1))
        return self._verdicts(CITATION_PROMPT, body, len(pairs),
                              lambda: self.fallback.pair_supported(pairs))

    def relevancy(self, question: str, answer: str) -> float:
        """How well the answer addresses the question, from the question it implies."""
        data = parse_json_reply(self._ask(RELEVANCY_PROMPT, f"Answer: {strip_markers(answer)}"),
                               dict)
        generated = data.get("question") if data else None
        if not isinstance(generated, str) or not generated.strip():
            self.fallbacks += 1
            return self.fallback.relevancy(question, answer)
        if str(data.get("noncommittal", 0)).strip().lower() in ("1", "true", "yes"):  # type: ignore[union-attr]
            return 0.0
        if self.fallback.embedder is None:
            return coverage(question, generated)
        return self.fallback.cosine(question, generated)

    def useful(self, question: str, reference: str, expected: list[str],
               contexts: list[str]) -> list[bool]:
        """Whether each context was useful for the reference answer, as the model says."""
        answer = reference or "; ".join(expected)
        user = (f"Question: {question}\nReference answer: {answer}\n\nPassages:\n"
                + _numbered([c[:1500] for c in contexts]))
        return self._verdicts(PRECISION_PROMPT, user, len(contexts),
                              lambda: self.fallback.useful(question, reference, expected, contexts))

    def attributed(self, claims: list[str], contexts: list[str]) -> list[bool]:
        """Whether each reference claim is attributable to the contexts, per the model."""
        user = f"Context:\n{self._context(contexts)}\n\nStatements:\n{_numbered(claims)}"
        return self._verdicts(RECALL_PROMPT, user, len(claims),
                              lambda: self.fallback.attributed(claims, contexts))


def make_judge(kind: str, settings: RagSettings) -> Judge:
    """`auto`: the LLM judge when a chat model is configured, else the heuristic one."""
    from ragloom import resources
    from ragloom.providers.chat import get_chat_model

    if kind not in JUDGES:
        from ragloom.errors import UnknownNameError

        raise UnknownNameError("judge", kind, JUDGES)
    heuristic = HeuristicJudge(resources.embedder(settings), embedder_name=settings.embedding.model)
    if kind == "heuristic" or (kind == "auto" and settings.chat.provider == "none"):
        return heuristic
    chat = get_chat_model(settings.chat)
    if chat is None:
        raise ConfigError("the llm judge needs a chat model", where="settings.chat",
                          hint="configure chat.provider (e.g. openai with base_url) or use --judge heuristic")
    return LlmJudge(chat, f"{settings.chat.provider}:{settings.chat.model}", heuristic)
