"""The generate node: a grounded answer with `[n]` markers, from a chat model or extractively.

A chat model's answer is repaired before it leaves the node (`nodes/repair.py`): sentences that
cite no supporting passage get the marker of the passage that supports them or are dropped, and an
answer with nothing supported becomes the extractive answer (`nodes/extractive.py`). Passages
flagged suspicious at ingest are left out of the prompt (`generate.suspicious: exclude`, the
default) or fenced as quoted data (`fence`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.assemble import is_suspicious, prompt_markers, render_context
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.extractive import IDK, MIN_RELEVANCE, extractive_answer
from ragloom.nodes.repair import EXTRACTIVE_FALLBACK, repair_draft, strip_echoes
from ragloom.nodes.text import clip, filter_markers, markers_in
from ragloom.nodes.trace import StageClock, log_once
from ragloom.providers.chat import complete
from ragloom.state import Citation, RagState, ScoredChunk

NO_CONTEXT = "I don't know: no passages were retrieved for this question."
SNIPPET_CHARS = 300
WORDS_PER_TOKEN = 0.75
MAX_ANSWER_WORDS = 120

SYSTEM_PROMPT = (
    "You answer questions using only the numbered passages the user gives you. Every sentence of "
    "your answer ends with the number of the passage that supports it in square brackets, like "
    f"[1]. Add no outside knowledge. If the passages do not answer the question, reply exactly: "
    f"{IDK}"
)


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


def answer_words(max_tokens: int) -> int:
    """The word budget the prompt asks for, so the reply fits `chat.max_tokens`."""
    return max(8, min(MAX_ANSWER_WORDS, int(max_tokens * WORDS_PER_TOKEN)))


def user_prompt(question: str, passages: Sequence[ScoredChunk], ordering: str,
                suspicious: str = "exclude", max_tokens: int = 512, max_sentences: int = 4) -> str:
    """The user turn for small models too: numbered passages, the question, then the instruction
    to cite repeated after them, with a length that fits max_tokens."""
    context = render_context(passages, ordering, suspicious)
    return (
        f"Passages:\n\n{context}\n\nQuestion: {question}\n\n"
        f"Answer the question in 1 to {max_sentences} short sentences (at most "
        f"{answer_words(max_tokens)} words), using only the passages above. End every sentence "
        "with the number of the passage it comes from in square brackets, for example [1] or [2]. "
        f"If the passages do not contain the answer, reply exactly: {IDK}\n\nAnswer:"
    )


def is_abstention(draft: str) -> bool:
    """True when the draft declines to answer."""
    return draft.strip().lower().startswith(IDK.lower())


def _extractive(state: RagState, deps: RagDeps, passages: list[ScoredChunk],
                min_relevance: float = MIN_RELEVANCE) -> str:
    """The offline answer: passage units extracted for the question."""
    settings = deps.settings.generate
    return extractive_answer(state["question"], passages, settings.max_sentences,
                             settings.max_chars, embedder=deps.embedder,
                             min_relevance=min_relevance)


def _repaired(state: RagState, deps: RagDeps, passages: list[ScoredChunk], reply: str,
              shown: list[int], clock: StageClock) -> str:
    """Check the reply's markers, then repair it: cite support, drop the unsupported, or answer
    extractively when nothing is supported."""
    settings = deps.settings.generate
    echoes = strip_echoes(reply)
    if echoes != reply.strip():
        clock.note(echoes_removed=True)
    draft, cited, removed = check_markers(echoes, len(passages))
    clock.note(raw_markers=cited, removed_markers=removed)
    if not settings.repair or (draft and is_abstention(draft)):
        return draft or IDK
    titles = [str(p.chunk.metadata.get("title") or "") for p in passages]
    repair = repair_draft(draft, [p.chunk.text for p in passages], shown, embedder=deps.embedder,
                          keep_unsupported=settings.unsupported == "flag", titles=titles)
    unsupported = [clip(u, 120) for u in repair.unsupported]
    if repair.supported == 0:
        # the model did answer: its best grounded substitute is the most relevant passage unit,
        # without the offline answerer's own relevance floor (names absent from every passage
        # still mean "I don't know")
        clock.note(repair=EXTRACTIVE_FALLBACK, unsupported=unsupported)
        return _extractive(state, deps, passages, min_relevance=0.0)
    clock.note(repair=repair.action, kept=repair.kept, attributed=repair.attributed,
               corrected=repair.corrected, unsupported=unsupported,
               unsupported_policy=settings.unsupported)
    return repair.text


def _draft(state: RagState, deps: RagDeps, passages: list[ScoredChunk],
           clock: StageClock) -> tuple[str, bool]:
    """The answer draft and whether it is best-effort: the chat model's (repaired), or the
    extractive one without a chat model or when it does not answer."""
    settings = deps.settings
    if deps.chat is None:
        log_once("generate.extractive", "no chat model: answers are extracted from the passages")
        clock.note(generator="extractive", offline=True)
        return _extractive(state, deps, passages), False
    policy = settings.generate.suspicious
    shown = prompt_markers(passages, policy)
    clock.note(generator="chat", prompt_passages=shown, suspicious_policy=policy,
               suspicious_excluded=[m for m in range(1, len(passages) + 1) if m not in shown])
    prompt = user_prompt(state["question"], passages, settings.assemble.ordering, policy,
                         settings.chat.max_tokens, settings.generate.max_sentences)
    try:
        reply = complete(deps.chat, SYSTEM_PROMPT, prompt, stage="generate")
    except ChatUnavailableError as exc:
        log_once("generate.chat-unavailable", f"chat model unavailable, answering extractively: {exc}")
        clock.note(generator="extractive", fallback=f"extractive: {exc}")
        return _extractive(state, deps, passages), True
    if not reply:
        clock.note(empty_reply=True)
    return _repaired(state, deps, passages, reply, shown, clock), False


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
        text, best_effort = _draft(state, deps, passages, clock)
        draft, cited, _ = check_markers(text, len(passages))
        clock.note(cited=cited, abstained=is_abstention(draft),
                   suspicious_cited=[m for m in cited if is_suspicious(passages[m - 1])])
    update = {"draft": draft, "citations": build_citations(passages, cited), "trace": clock.trace()}
    return {**update, "best_effort": True} if best_effort else update
