"""The refusal node: a safe answer, in the request's language, for a question a guard stopped.

The input guard's refusals name the category; the scope check's (`out_of_scope` after retrieval)
says `I don't know` and names the closest sources the collection does hold. No citations. Each
refusal is logged (category, stage, language: never the question, which may hold personal data).
"""

from __future__ import annotations

import logging
from typing import Any

from ragloom.guardrails.messages import not_found, refusal
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import StageClock
from ragloom.nodes.verdicts import last_verdict
from ragloom.state import RagState, ScoredChunk

CLOSEST_SOURCES = 3
logger = logging.getLogger("ragloom")


def closest_sources(passages: list[ScoredChunk], limit: int = CLOSEST_SOURCES) -> list[str]:
    """Titles (else source ids) of the best passages' distinct sources."""
    names: list[str] = []
    for scored in passages:
        name = str(scored.chunk.metadata.get("title") or scored.chunk.source_id)
        if name not in names:
            names.append(name)
        if len(names) == limit:
            break
    return names


def refuse(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Answer with a refusal in the request's language (the category, or the closest sources)."""
    lang = state.get("lang") or deps.settings.guard.default_lang
    with StageClock("refuse") as clock:
        category = last_verdict(state, "input_guard")
        if category in (None, "ok"):
            sources = closest_sources(state.get("passages") or [])
            text, category, stage = not_found(sources, lang), "out_of_scope", "scope"
            clock.note(closest_sources=sources)
        else:
            text, stage = refusal(category, lang), "input_guard"
        clock.note(category=category, by=stage, lang=lang)
    logger.info("guardrail refusal: category=%s by=%s lang=%s", category, stage, lang)
    return {"draft": text, "citations": [], "refused": category, "trace": clock.trace()}
