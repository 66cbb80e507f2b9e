"""Multi-hop questions: decompose into sub-questions, bridge from first hops, merge every hop.

- **decompose** writes the first wave's probes: the question itself, plus one probe per compared
  entity ("Which is older, X or Y?" → "X older", "Y older") or per joined question ("..., and
  what ...?"); with a chat model, the sub-questions it writes.
- The graph sends each probe into the retrieval subgraph in parallel (`Send`).
- **bridge** lets later hops use what earlier ones found: for each of the best passages of the
  first hop it writes a follow-up probe from the names that passage mentions and the question does
  not, plus what the question still asks (its content words the passage lacks) — the follow-up of
  "Which county is the birthplace of the director of X?" from X's passage names the director.
- **merge** ranks the passages of every hop together: each first-hop passage is followed by the
  best passage its follow-up found, then the sub-questions' rankings take turns; so the one
  grounded answer can cite evidence from every hop.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.assemble import fit_budget
from ragloom.nodes.fusion_math import dedup
from ragloom.nodes.text import content_words, tokenize
from ragloom.nodes.trace import StageClock
from ragloom.providers.chat import complete_structured
from ragloom.state import Hop, RagState, ScoredChunk

BRIDGE_NAMES = 6
"""Names of a passage a follow-up probe carries, in order of appearance."""
_NAME_TOKEN = r"(?:[A-Z]\.|[A-Z][\w'’&\-]*(?:\.[\w'’&\-]+)*)"
_NAME = re.compile(
    rf"\b{_NAME_TOKEN}(?:[ \t]+(?:(?:of|the|de|del|la|le|von|van|der|&|for|on|in)[ \t]+)*"
    rf"{_NAME_TOKEN}|[ \t]+[0-9][\w\-]*)*")
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


_SENTENCE_STARTS = frozenset(
    "a an the in on at of for to by it its this that these those he she they we i you his her "
    "their our is are was were be who what which where when why how do does did has have had "
    "also however after before during while since".split())


def names_in(text: str) -> list[str]:
    """Quoted titles and capitalised name spans in text, in order of appearance, once each (a
    word that is capitalised only because it starts a sentence is left out)."""
    found = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    for match in _NAME.finditer(text):
        name = match.group(0).strip(" .,'’")
        at_start = match.start() == 0 or text[max(0, match.start() - 2):match.start()].strip() in ".!?"
        first, _, rest = name.partition(" ")
        if at_start and first.lower() in _SENTENCE_STARTS:
            name = rest
        if name:
            found.append(name)
    return list(dict.fromkeys(n for n in found if len(n) > 1))


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


def joined_questions(question: str) -> list[str]:
    """The questions a compound question joins ("..., and when ...?"); one item when none."""
    return [p.strip(" ,;") for p in _COMPOUND.split(question) if p.strip(" ,;")]


def offline_sub_questions(question: str) -> list[str]:
    """Sub-questions found without a model: joined questions split, compared entities apart."""
    parts = joined_questions(question)
    return parts if len(parts) > 1 else comparison_probes(question)


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
                                            Decomposition, stage="transform")
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


def follow_up_probe(question: str, source: ScoredChunk) -> str:
    """The names a passage mentions and the question does not, plus what the question still
    asks (its content words the passage lacks); '' when the passage names nothing new."""
    names = [n for n in names_in(source.chunk.text) if _unasked(n, question)][:BRIDGE_NAMES]
    if not names:
        return ""
    known = set(tokenize(source.chunk.text))
    still = [w for w in dict.fromkeys(content_words(question)) if not set(tokenize(w)) <= known]
    return " ".join([*still, *names])


def bridge(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Plan the second wave: one follow-up hop per best passage of the question's own hop."""
    question = state["question"]
    hops = sorted(state.get("hops", []), key=lambda h: h.index)
    limit = deps.settings.adaptive.bridge_hops
    plan: list[Hop] = []
    with StageClock("bridge") as clock:
        if comparison_probes(question):
            clock.note(reason="comparison: every entity is named in the question")
        elif hops:
            for scored in hops[0].passages[:limit]:
                probe = follow_up_probe(question, scored)
                if probe:
                    plan.append(Hop(index=len(hops) + len(plan) + 1, wave=2, probe=probe,
                                    source=scored.chunk.id))
        clock.note(probes=[h.probe for h in plan])
    return {"bridge_plan": plan, "query_variants": [h.probe for h in plan], "trace": clock.trace()}


def interleave(hops: list[Hop]) -> list[ScoredChunk]:
    """First-hop passages each followed by the best passage of its follow-up hop, then the other
    hops' passages taking turns by rank; every chunk once, at its first place."""
    first = [h for h in hops if h.wave == 1]
    follow = {h.source: h for h in hops if h.wave == 2 and h.source}
    order: list[ScoredChunk] = []
    placed: set[str] = set()
    main = first[0].passages if first else []
    for scored in main:
        if scored.chunk.id not in placed:
            order.append(scored)
            placed.add(scored.chunk.id)
        after = follow.get(scored.chunk.id)
        found = next((p for p in (after.passages if after else []) if p.chunk.id not in placed
                      and p.chunk.id not in {s.chunk.id for s in main[:1]}), None)
        if found is not None:
            order.append(found)
            placed.add(found.chunk.id)
    rest = [h.passages for h in first[1:]] + [h.passages[1:] for h in follow.values()]
    for rank in range(max((len(r) for r in rest), default=0)):
        order.extend(r[rank] for r in rest if rank < len(r))
    return dedup(order)


def merge(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Rank the passages of every hop together and fit the best top_n to the budget."""
    hops = sorted(state.get("hops", []), key=lambda h: h.index)
    top_n = state.get("top_n") or deps.settings.rerank.top_n
    budget = deps.settings.assemble
    with StageClock("merge") as clock:
        ranked = [s.model_copy(update={"score_origin": f"{s.score_origin}+hop"})
                  for s in interleave(hops)[:top_n]]
        passages, dropped, _ = fit_budget(ranked, budget.token_budget, budget.chars_per_token)
        clock.note(hops=len(hops), per_hop=[len(h.passages) for h in hops], merged=len(passages),
                   dropped=dropped)
    return {"passages": passages, "trace": clock.trace()}
