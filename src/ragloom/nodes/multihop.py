"""Multi-hop questions: decompose into sub-questions, bridge from first hops, merge every hop.

- **decompose** writes the first wave's probes: the question itself, plus one probe per compared
  entity ("Which is older, X or Y?" → "X older", "Y older") or per joined question ("..., and
  what ...?"); with a chat model, the sub-questions it writes.
- The graph sends each probe into the retrieval subgraph in parallel (`Send`).
- **bridge** lets later hops use what earlier ones found: from the first hops' best passages it
  takes the entities the question does not name (a passage's title, capitalised names in its
  text) and writes second-wave probes "entity + what the question still asks" — the second hop of
  "Which county is the birthplace of the director of X?" searches for the director by name.
- **merge** ranks the passages of every hop together (rank fusion, each hop's best kept), so the
  one grounded answer can cite evidence from every hop.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.merge import merge_rankings
from ragloom.nodes.text import content_words, tokenize
from ragloom.nodes.trace import StageClock
from ragloom.providers.chat import complete_structured
from ragloom.state import Hop, RagState, ScoredChunk

BRIDGE_PASSAGES = 2
"""Best passages of each first-wave hop that bridge entities are taken from."""
_NAME = re.compile(
    r"\b[A-Z][\w'’&.\-]*(?:\s+(?:(?:of|the|de|del|la|le|von|van|der|and|&|for|on|in)\s+)*"
    r"[A-Z0-9][\w'’&.\-]*)*")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_ALTERNATIVES = re.compile(r"(?:,|:)?\s*(?:both\s+)?(.+?)\s+(?:or|and)\s+(.+?)\s*[?.!]*$",
                           re.IGNORECASE)
_COMPOUND = re.compile(r"[,;]\s*and\s+(?=(?:who|what|which|where|when|why|how)\b)", re.IGNORECASE)
LLM_SYSTEM = (
    "Split a complex question into at most {n} simple search questions, each about one thing, in "
    'the order they must be answered. Reply with JSON: {{"sub_questions": ["...", "..."]}}'
)


class Decomposition(BaseModel):
    """The structured reply of the LLM decomposer."""

    sub_questions: list[str]


def names_in(text: str) -> list[str]:
    """Quoted titles and capitalised name spans in text, in order of appearance, once each."""
    found = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    for match in _NAME.finditer(text):
        name = match.group(0).strip(" .,'’")
        if match.start() == 0 or text[max(0, match.start() - 2):match.start()].strip() in ".!?":
            first, _, rest = name.partition(" ")
            if not rest and first.lower() in _SENTENCE_STARTS:
                continue
        found.append(name)
    return list(dict.fromkeys(n for n in found if len(n) > 1))


_SENTENCE_STARTS = frozenset(
    "a an the in on at of for to by it its this that these those he she they we i you his her "
    "their our is are was were be who what which where when why how do does did has have had "
    "also however after before during while since".split())


def _unasked(name: str, question: str) -> bool:
    """Whether a name brings something new: not every one of its terms is in the question."""
    terms = set(tokenize(name))
    return bool(terms) and not terms <= set(tokenize(question))


def comparison_probes(question: str) -> list[str]:
    """One probe per compared entity ("X or Y", "both X and Y"), each with the shared predicate."""
    tail = question.rsplit(",", 1)[-1] if "," in question else question
    match = _ALTERNATIVES.search(tail)
    if match is None:
        return []
    left, right = names_in(match.group(1)), names_in(match.group(2))
    if not left or not right:
        return []
    entities = [left[-1], right[0]]
    entity_terms = set(tokenize(" ".join(entities)))
    predicate = [w for w in dict.fromkeys(content_words(question))
                 if not set(tokenize(w)) <= entity_terms]
    return [" ".join([entity, *predicate]) for entity in entities]


def offline_sub_questions(question: str) -> list[str]:
    """Sub-questions found without a model: joined questions split, compared entities apart."""
    parts = [p.strip(" ,;") for p in _COMPOUND.split(question) if p.strip(" ,;")]
    if len(parts) > 1:
        return parts
    return comparison_probes(question)


def decompose(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Write the first wave of probes: the question and its sub-questions."""
    question = state["question"]
    limit = deps.settings.adaptive.max_hops
    update: dict[str, Any] = {}
    with StageClock("decompose") as clock:
        subs: list[str] = []
        if deps.chat is not None:
            try:
                reply = complete_structured(deps.chat, LLM_SYSTEM.format(n=limit), question,
                                            Decomposition)
                subs = [s.strip() for s in (reply.sub_questions if reply else []) if s.strip()]
                clock.note(decomposer="llm")
            except ChatUnavailableError as exc:
                clock.note(fallback=f"offline: {exc.what}")
                update["best_effort"] = True
        if not subs:
            subs = offline_sub_questions(question)
            clock.note(decomposer="offline")
        probes = list(dict.fromkeys([question, *subs]))[: limit + 1]
        clock.note(probes=probes, comparison=bool(comparison_probes(question)))
    update.update({"probes": probes, "query_variants": probes[1:], "trace": clock.trace()})
    return update


def bridge_entities(question: str, hops: list[Hop], limit: int) -> list[tuple[str, ScoredChunk]]:
    """Entities the first hops' best passages name and the question does not, with the passage
    each came from: titles first, then names in the text, best passages first."""
    found: dict[str, ScoredChunk] = {}
    passages = [p for hop in sorted(hops, key=lambda h: h.index) for p in hop.passages[:BRIDGE_PASSAGES]]
    for scored in passages:
        title = str(scored.chunk.metadata.get("title") or "")
        if title and _unasked(title, question):
            found.setdefault(title, scored)
    for scored in passages:
        for name in names_in(scored.chunk.text):
            if _unasked(name, question):
                found.setdefault(name, scored)
    return list(found.items())[:limit]


def bridge_probe(question: str, entity: str, source: ScoredChunk) -> str:
    """The entity plus what the question still asks: its content words the source lacks."""
    known = set(tokenize(source.chunk.text)) | set(tokenize(entity))
    still = [w for w in dict.fromkeys(content_words(question)) if not set(tokenize(w)) <= known]
    return " ".join([entity, *still])


def bridge(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Write the second wave of probes from the entities the first hops found."""
    question = state["question"]
    hops = state.get("hops", [])
    limit = deps.settings.adaptive.bridge_entities
    with StageClock("bridge") as clock:
        if comparison_probes(question):
            probes: list[str] = []
            clock.note(reason="comparison: every entity is named in the question")
        else:
            entities = bridge_entities(question, hops, limit)
            probes = list(dict.fromkeys(bridge_probe(question, e, s) for e, s in entities))
            clock.note(entities=[e for e, _ in entities])
        clock.note(probes=probes)
    return {"bridge_probes": probes, "query_variants": probes, "trace": clock.trace()}


def merge(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Rank the passages of every hop together, each hop's best passage kept."""
    hops = sorted(state.get("hops", []), key=lambda h: h.index)
    top_n = state.get("top_n") or deps.settings.rerank.top_n
    with StageClock("merge") as clock:
        passages = merge_rankings([h.passages for h in hops], top_n, deps)
        clock.note(hops=len(hops), per_hop=[len(h.passages) for h in hops], merged=len(passages))
    return {"passages": passages, "trace": clock.trace()}
