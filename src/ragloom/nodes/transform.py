"""The transform node: turn the question into retrieval probes.

Transforms: `none`, `multi-query` (variants, unioned later), `rag-fusion` (variants, fused by RRF),
`hyde` (a hypothetical answer as the probe; generation still uses the original question).
When the chat model does not answer (ChatUnavailableError) the stage falls back to its offline path
(keyword and pseudo-relevance-feedback variants; the question itself for hyde), traces
`fallback` with the reason and marks the answer best-effort. Rejected credentials stay errors.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ragloom.errors import ChatUnavailableError, UnknownNameError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.pool import retrieval_text
from ragloom.nodes.text import content_words, tokenize
from ragloom.nodes.trace import StageClock, log_once
from ragloom.providers.chat import complete, parse_json_list_reply
from ragloom.state import RagState

TRANSFORMS = ("none", "multi-query", "rag-fusion", "hyde")
PRF_DOCS = 5
PRF_TERMS = 5
MAX_VARIANT_CHARS = 300

VARIANTS_SYSTEM = (
    "You rewrite search questions. Write {n} different search queries that together cover what "
    "the user asks: rephrase, use synonyms, split compound questions. One query per line, no "
    "numbering, no explanations."
)
HYDE_SYSTEM = (
    "Write one short factual passage (3-5 sentences) that would answer the question, as it might "
    "appear in a reference document. Output only the passage."
)

_BULLET = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):]|#+)\s*")
_LABEL = re.compile(r"^(?:query|question|variant|search)\s*\d*\s*[:.\-]\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’`"


def check_transform(name: str) -> None:
    """Raise UnknownNameError unless name is a known transform."""
    if name not in TRANSFORMS:
        raise UnknownNameError("transform", name, TRANSFORMS)


def _norm(text: str) -> str:
    """Whitespace- and case-insensitive key for deduplication."""
    return " ".join(text.lower().split())


def _json_items(text: str) -> list[str] | None:
    """Strings of the first JSON list in text (or of a mapping's first list value), else None."""
    data = parse_json_list_reply(text)
    if data is None:
        return None
    return [str(item) for item in data if isinstance(item, (str, int, float))]


def _clean_line(line: str) -> str:
    """Strip bullets, numbering, labels and quotes from one line."""
    line = _LABEL.sub("", _BULLET.sub("", line.strip()))
    return line.strip().strip(_QUOTES).strip()


def parse_variants(text: str, n: int, original: str) -> list[str]:
    """Parse up to n distinct query variants from LLM output (JSON list or one per line)."""
    items = _json_items(text)
    if items is None:
        items = text.splitlines()
    seen = {_norm(original)}
    variants: list[str] = []
    for item in items:
        line = _clean_line(item)
        if (
            not line
            or line.endswith(":")
            or len(line) > MAX_VARIANT_CHARS
            or not content_words(line)
        ):
            continue
        if _norm(line) in seen:
            continue
        seen.add(_norm(line))
        variants.append(line)
        if len(variants) == n:
            break
    return variants


def keyword_variant(question: str) -> str:
    """The question reduced to its content words."""
    return " ".join(dict.fromkeys(content_words(question)))


def prf_variant(question: str, deps: RagDeps, filters: dict[str, Any] | None) -> str:
    """Pseudo-relevance feedback: question + top terms of a first BM25 pass ('' without BM25)."""
    index = deps.bm25_index()
    if index is None:
        return ""
    hits = index.search(question, PRF_DOCS, where=filters)
    asked = set(tokenize(question))
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for hit in hits:
        stems = {stem: word for word in content_words(hit.chunk.text) for stem in tokenize(word)}
        for stem, word in stems.items():
            if stem not in asked and not word.isdigit():
                surface.setdefault(stem, word)
                counts[stem] += 1
    terms = [surface[stem] for stem, _ in counts.most_common(PRF_TERMS)]
    return f"{question} {' '.join(terms)}" if terms else ""


def _offline_variants(
    question: str, n: int, deps: RagDeps, filters: dict[str, Any] | None
) -> list[str]:
    """Variants built without a chat model: keyword-only and PRF expansion."""
    candidates = [keyword_variant(question), prf_variant(question, deps, filters)]
    seen = {_norm(question)}
    variants: list[str] = []
    for variant in candidates:
        if variant and _norm(variant) not in seen:
            seen.add(_norm(variant))
            variants.append(variant)
    return variants[:n]


def _fallback(clock: StageClock, exc: ChatUnavailableError) -> None:
    """Trace that the chat model did not answer and the offline path ran instead."""
    log_once("transform.chat-unavailable", f"transform falls back to its offline path: {exc}")
    clock.note(fallback="offline", reason=str(exc))


def _llm_variants(question: str, n: int, deps: RagDeps, clock: StageClock) -> list[str]:
    """Ask the chat model for n variants; empty when its output has none (traced)."""
    assert deps.chat is not None
    reply = complete(deps.chat, VARIANTS_SYSTEM.format(n=n), question, stage="transform")
    variants = parse_variants(reply, n, question)
    if not variants:
        clock.note(degraded="no usable variants in the model output")
    return variants


def _hyde(question: str, deps: RagDeps, clock: StageClock) -> str:
    """A hypothetical answer passage, or '' when there is no chat model or no usable output."""
    if deps.chat is None:
        log_once("transform.hyde-no-chat", "hyde needs a chat model: using the original question")
        clock.note(degraded="hyde needs a chat model")
        return ""
    passage = complete(deps.chat, HYDE_SYSTEM, question, stage="transform")
    if not content_words(passage):
        clock.note(degraded="empty hypothetical passage")
        return ""
    return passage


def _expand(question: str, deps: RagDeps, state: RagState, clock: StageClock) -> list[str]:
    """Variants for multi-query / rag-fusion, from the chat model or offline."""
    n = deps.settings.transform.n_variants
    if deps.chat is not None:
        clock.note(offline=False)
        return _llm_variants(question, n, deps, clock)
    log_once("transform.offline", "no chat model: query variants are built offline (keywords, PRF)")
    clock.note(offline=True, reason="no chat model: keyword and pseudo-relevance-feedback variants")
    return _offline_variants(question, n, deps, state.get("filters") or None)


def _probes(name: str, question: str, deps: RagDeps, state: RagState,
            clock: StageClock) -> tuple[list[str], list[str]]:
    """(probes, variants) of a transform that uses the chat model when there is one."""
    if name == "hyde":
        passage = _hyde(question, deps, clock)
        return ([passage] if passage else [question]), ([passage] if passage else [])
    variants = _expand(question, deps, state, clock)
    return [question, *variants], variants


def transform(state: RagState, deps: RagDeps) -> dict:
    """Build the retrieval probes for the question with the configured transform."""
    name = deps.settings.transform.name
    check_transform(name)
    question = retrieval_text(state)
    with StageClock("transform") as clock:
        clock.note(transform=name)
        if name == "none":
            return {"probes": [question], "query_variants": [], "trace": clock.trace()}
        update: dict[str, Any] = {}
        try:
            probes, variants = _probes(name, question, deps, state, clock)
        except ChatUnavailableError as exc:
            _fallback(clock, exc)
            update["best_effort"] = True
            variants = [] if name == "hyde" else _offline_variants(
                question, deps.settings.transform.n_variants, deps, state.get("filters") or None)
            probes = [question, *variants]
        clock.note(variants=len(variants), probes=len(probes))
    return {**update, "probes": probes, "query_variants": variants, "trace": clock.trace()}
