"""The adaptive router's classifier and the direct answer of questions that need no retrieval.

Routes: `no_retrieval` (greetings, thanks, chit-chat, arithmetic), `multi_hop` (a question that
compares named things, joins several questions, or asks about something identified through
something else: a relative clause, a participle such as "directed by", two sentences),
`iterative` (many of the question's terms are unknown to the collection: a vocabulary gap the
corrective loop's rewrite can bridge) and `single_shot` (everything else; statements such as
claims to verify are always single-shot or iterative). The heuristic makes no model call; the
`llm` classifier makes one constrained call and falls back to the heuristic (logged once, traced).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.multihop import joined_questions
from ragloom.nodes.structured import structured_or_fallback
from ragloom.nodes.text import content_words
from ragloom.nodes.trace import StageClock
from ragloom.providers.chat import complete
from ragloom.sentences import split_sentences
from ragloom.state import RagState

Route = Literal["no_retrieval", "single_shot", "iterative", "multi_hop"]

_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|hiya|yo|good (?:morning|afternoon|evening|night)|greetings|thanks?"
    r"(?: you)?(?: (?:so|very) much)?|thank you|cheers|bye|goodbye|see you|ok(?:ay)?|cool|great"
    r"|how are you(?: doing)?|how's it going|what's up|who are you|what can you do"
    r"|what are you|bonjour|salut|merci(?: beaucoup)?|au revoir|hallo|danke(?: schön)?"
    r"|guten (?:morgen|tag|abend))\b[\s!.,?]*(?:there|again|everyone|all|ragloom)?[\s!.,?]*$",
    re.IGNORECASE,
)
_ARITHMETIC_FILLER = re.compile(
    r"^(?:what(?:'s| is)|calculate|compute|how much is|evaluate|solve)?\s*", re.IGNORECASE)
_EXPRESSION = re.compile(r"^[\d\s.+\-*/%()^x×÷]+$")
_QUESTION_START = re.compile(
    r"^(?:who|whom|whose|what|which|where|when|why|how|is|are|was|were|do|does|did|can|could|"
    r"should|would|will|has|have|had|in what|in which|on what|at what)\b", re.IGNORECASE)
_RELATIVE = re.compile(r"\S\s+(?:who|whom|whose|that|which|where)\s+\w", re.IGNORECASE)
_PARTICIPLE = re.compile(
    r"\b\w+(?:ed|en|wn)\s+by\b|\b(?:born|founded|formed|located|based|married|named|known)\s+"
    r"(?:in|as|to|after|for|by)\b", re.IGNORECASE)
_COMPARISON = re.compile(r"\bboth\b|\beither\b|\bsame\b|\bor\b|\bcompared? (?:to|with)\b",
                         re.IGNORECASE)
LLM_SYSTEM = (
    "Classify how a question should be answered from a document collection. Routes: "
    "no_retrieval (greetings, chit-chat, arithmetic), single_shot (one lookup answers it), "
    "iterative (hard to find: vague or unusual wording), multi_hop (needs facts about two or "
    'more things, one leading to the other, or a comparison). Reply with JSON: '
    '{"route": "single_shot", "reason": "a few words"}'
)
DIRECT_SYSTEM = "You are a helpful assistant. Answer briefly. You have no documents for this."
GREETING = "Hello! Ask me a question about the documents in this collection and I will answer it with citations."


class RouteReply(BaseModel):
    """The structured reply of the LLM classifier."""

    route: Route
    reason: str = ""


def arithmetic(question: str) -> str | None:
    """The arithmetic expression a question consists of, or None."""
    expression = _ARITHMETIC_FILLER.sub("", question.strip()).rstrip("?=!. ")
    if not expression or not _EXPRESSION.match(expression) or not re.search(r"\d", expression):
        return None
    if not re.search(r"[+\-*/%^x×÷]", expression):
        return None
    return expression.replace("^", "**").replace("×", "*").replace("÷", "/").replace("x", "*")


def is_question(text: str) -> bool:
    """A question (ends with '?' or starts like one) rather than a statement."""
    stripped = text.strip()
    return stripped.endswith("?") or bool(_QUESTION_START.match(stripped))


def multi_hop_signal(question: str) -> str | None:
    """Why a question needs several hops (comparison, compound, relative clause, participle,
    two sentences), or None."""
    if not is_question(question):
        return None
    if len(joined_questions(question)) > 1:
        return "compound question"
    named = re.findall(r"\b[A-Z][\w'’&.-]*", question[1:])
    if _COMPARISON.search(question) and len(named) >= 2:
        return "comparison of named things"
    if len(split_sentences(question)) >= 2:
        return "several sentences"
    if len(content_words(question)) >= 5 and (_RELATIVE.search(question)
                                               or _PARTICIPLE.search(question)):
        return "identified through something else"
    return None


def vocabulary_gap(question: str, deps: RagDeps) -> float | None:
    """Share of the question's terms the collection's BM25 index does not know (None: no index)."""
    index = deps.bm25_index()
    coverage = index.vocabulary_coverage(question) if index is not None else None
    return None if coverage is None else round(1.0 - coverage, 3)


def heuristic_route(question: str, deps: RagDeps) -> tuple[Route, str]:
    """Route a question without a model call; returns (route, reason)."""
    if _SMALL_TALK.match(question.strip()):
        return "no_retrieval", "small talk"
    if arithmetic(question):
        return "no_retrieval", "arithmetic"
    signal = multi_hop_signal(question)
    if signal:
        return "multi_hop", signal
    gap = vocabulary_gap(question, deps)
    if gap is not None and gap >= deps.settings.adaptive.vocabulary_gap:
        return "iterative", f"vocabulary gap: {gap:.0%} of the terms are unknown to the collection"
    return "single_shot", "one lookup"


def classify(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Choose the route that answers this question: direct, single-shot, corrective or multi-hop."""
    question = state["question"]
    update: dict[str, Any] = {}
    with StageClock("classify") as clock:
        reply = None
        if deps.settings.adaptive.classifier == "llm":
            reply = structured_or_fallback(deps, clock, update, system=LLM_SYSTEM, user=question,
                                           schema=RouteReply, fallback="heuristic", stage="classify")
        if reply is not None:
            classifier, route, reason = "llm", reply.route, reply.reason
        else:
            classifier = "heuristic"
            route, reason = heuristic_route(question, deps)
        clock.note(classifier=classifier, route=route, reason=reason)
    update.update({"route": route, "trace": clock.trace()})
    return update


def direct(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Answer without retrieval: arithmetic evaluated, small talk answered (no citations)."""
    from simpleeval import simple_eval

    question = state["question"]
    update: dict[str, Any] = {"citations": []}
    with StageClock("direct") as clock:
        expression = arithmetic(question)
        text = ""
        if expression is not None:
            try:
                text = f"{expression.replace('**', '^')} = {simple_eval(expression)}"
                clock.note(answerer="arithmetic")
            except Exception as exc:  # noqa: BLE001 - any evaluation failure: answer otherwise
                clock.note(arithmetic_error=f"{type(exc).__name__}: {exc}")
        if not text and deps.chat is not None and deps.settings.generate.enabled:
            try:
                text = complete(deps.chat, DIRECT_SYSTEM, question, stage="classify")
                clock.note(answerer="chat")
            except ChatUnavailableError as exc:
                clock.note(fallback=f"canned reply: {exc.what}")
                update["best_effort"] = True
        if not text:
            text = GREETING if deps.settings.generate.enabled else ""
            clock.note(answerer="canned reply")
    update.update({"draft": text, "trace": clock.trace()})
    return update
