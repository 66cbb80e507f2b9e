"""The output guard: check the generated answer before it leaves the graph.

- Personal data (e-mail addresses, phone numbers, IBANs, card numbers; validated, see
  `guardrails.pii`) is redacted from the answer unless the same value stands in a retrieved passage
  that `guard.pii_allow` (a metadata filter) allows to show it; cited snippets of passages that are
  not allowed are redacted too (their offsets are untouched).
- An answer that cites no passage (and is no abstention) is kept, prefixed with a warning or
  replaced by `I don't know` and the closest sources, by `guard.uncited`. Answers of the adaptive
  `no_retrieval` route (greetings, arithmetic) are not expected to cite.

Every check is traced, and the outcome is `Verdict(stage="output_guard", verdict=pass | redacted
| softened | refused)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.guardrails.messages import not_found, uncited_warning
from ragloom.guardrails.pii import find_pii, redact
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.generate import is_abstention
from ragloom.nodes.refuse import closest_sources
from ragloom.nodes.text import markers_in
from ragloom.nodes.trace import StageClock
from ragloom.settings import GuardSettings
from ragloom.state import Citation, RagState, ScoredChunk, Verdict
from ragloom.stores.filters import compile_where, filterable_metadata

STAGE = "output_guard"


def allowed_passages(passages: Sequence[ScoredChunk], settings: GuardSettings) -> set[str]:
    """Ids of the passages `guard.pii_allow` lets show personal data."""
    if settings.pii_allow is None:
        return set()
    allow = compile_where(settings.pii_allow)
    return {p.chunk.id for p in passages if allow(filterable_metadata(p.chunk))}


def _redacted_snippets(citations: Sequence[Citation], allowed: set[str],
                       settings: GuardSettings) -> tuple[list[Citation], int]:
    """Citations whose snippets from passages not allowed to show personal data are redacted."""
    out: list[Citation] = []
    count = 0
    for citation in citations:
        matches = [] if citation.chunk_id in allowed else find_pii(
            citation.snippet, settings.pii, settings.phone_regions)
        count += len(matches)
        out.append(citation.model_copy(update={"snippet": redact(citation.snippet, matches)})
                   if matches else citation)
    return out, count


def output_guard(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Redact personal data from the answer and apply the citation policy."""
    settings = deps.settings.guard
    draft = state.get("draft") or ""
    passages = state.get("passages") or []
    lang = state.get("lang") or settings.default_lang
    with StageClock(STAGE) as clock:
        allowed = allowed_passages(passages, settings)
        found = find_pii(draft, settings.pii, settings.phone_regions)
        shown = {m.key for p in passages if p.chunk.id in allowed and found
                 for m in find_pii(p.chunk.text, settings.pii, settings.phone_regions)}
        hidden = [m for m in found if m.key not in shown]
        text = redact(draft, hidden)
        citations, snippet_redactions = _redacted_snippets(state.get("citations") or [], allowed,
                                                           settings)
        clock.note(pii_found=sorted({m.kind for m in found}), pii_redacted=len(hidden),
                   pii_allowed=len(found) - len(hidden), snippets_redacted=snippet_redactions)
        expects_citations = state.get("route") != "no_retrieval"
        cited = bool(citations) and bool(markers_in(text))
        action = "redacted" if hidden or snippet_redactions else "pass"
        if expects_citations and text and not cited and not is_abstention(text):
            clock.note(uncited=True, policy=settings.uncited)
            if settings.uncited == "soften":
                text, action = f"{uncited_warning(lang)}\n\n{text}", "softened"
            elif settings.uncited == "refuse":
                text, action, citations = not_found(closest_sources(passages), lang), "refused", []
        clock.note(verdict=action, cited=cited)
    reason = (f"personal data redacted: {len(hidden)} in the answer, {snippet_redactions} in "
              f"snippets; cited: {cited}; uncited policy: {settings.uncited}")
    return {"draft": text, "citations": citations, "trace": clock.trace(),
            "verdicts": [Verdict(stage=STAGE, verdict=action, reason=reason)]}
