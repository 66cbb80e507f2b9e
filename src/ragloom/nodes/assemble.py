"""The assemble node: pick passages under the token budget and define the prompt layout.

Budget rule: passages are taken greedily in rank order; one whose rendered block does not fit is
dropped (and counted) and smaller lower-ranked ones may still fit. Only the best passage is ever
truncated, when it alone exceeds the budget, so an answer always has context; its `end` offset is
moved to match. Markers are rank based ([1] = best); the layout only changes the prompt order.

Passages flagged `suspicious` at ingest (possible prompt injection) are rendered fenced as quoted
data under a warning, and the budget counts them that way; a prompt may also leave them out
(`generate.suspicious: exclude`), keeping the other passages' markers.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.text import clip, estimate_tokens
from ragloom.nodes.trace import StageClock
from ragloom.providers import quoting
from ragloom.state import RagState, ScoredChunk

SEPARATOR = "\n\n"


def is_suspicious(scored: ScoredChunk) -> bool:
    """True when ingest flagged the passage's document as possible prompt injection."""
    return quoting.is_suspicious(scored.chunk.metadata)


def suspicious_signals(scored: ScoredChunk) -> str:
    """The injection signals recorded at ingest, comma-separated ('unspecified' when none)."""
    return quoting.suspicious_signals(scored.chunk.metadata)


def source_label(source_id: str) -> str:
    """The short name a prompt shows for a source: its file name (or URL path end), not the path."""
    tail = source_id.rstrip("/").rsplit("/", 1)[-1]
    return tail or source_id


def render_passage(marker: int, scored: ScoredChunk) -> str:
    """The prompt block of one passage: `[n] (source) text`; suspicious text fenced as data."""
    head = f"[{marker}] ({source_label(scored.chunk.source_id)})"
    if not is_suspicious(scored):
        return f"{head} {scored.chunk.text}"
    return f"{head} {quoting.fenced(scored.chunk.text, scored.chunk.metadata)}"


def layout_order(count: int, ordering: str) -> list[int]:
    """Markers (1-based) in prompt order; `edges`: best at both ends, weakest in the middle."""
    markers = list(range(1, count + 1))
    if ordering != "edges":
        return markers
    return markers[0::2] + markers[1::2][::-1]


def prompt_markers(passages: Sequence[ScoredChunk], suspicious: str = "fence") -> list[int]:
    """Markers of the passages a prompt may show: all, or none flagged suspicious (`exclude`)."""
    return [m for m, p in enumerate(passages, start=1)
            if suspicious != "exclude" or not is_suspicious(p)]


def render_context(passages: Sequence[ScoredChunk], ordering: str,
                   suspicious: str = "fence") -> str:
    """The context block for the prompt: passages in layout order, each with its rank marker;
    suspicious ones fenced (`fence`) or left out (`exclude`)."""
    shown = set(prompt_markers(passages, suspicious))
    order = [m for m in layout_order(len(passages), ordering) if m in shown]
    return SEPARATOR.join(render_passage(m, passages[m - 1]) for m in order)


def _truncate(scored: ScoredChunk, capacity: int) -> ScoredChunk | None:
    """The passage cut to fit capacity chars once rendered as marker 1, or None if nothing fits."""
    overhead = len(render_passage(1, scored)) - len(scored.chunk.text) + len(SEPARATOR)
    text = clip(scored.chunk.text, capacity - overhead)
    if not text.strip():
        return None
    chunk = scored.chunk.model_copy(update={"text": text, "end": scored.chunk.start + len(text)})
    return scored.model_copy(update={"chunk": chunk})


def fit_budget(
    ranked: Sequence[ScoredChunk], token_budget: int, chars_per_token: float
) -> tuple[list[ScoredChunk], int, bool]:
    """Select passages whose rendered context fits the budget; return (kept, dropped, truncated)."""
    capacity = int(token_budget * chars_per_token)
    kept: list[ScoredChunk] = []
    used = 0
    truncated = False
    for position, scored in enumerate(ranked):
        cost = len(render_passage(len(kept) + 1, scored)) + len(SEPARATOR)
        if used + cost > capacity and position == 0:
            cut = _truncate(scored, capacity)
            if cut is None:
                continue
            scored, truncated = cut, True
            cost = len(render_passage(1, scored)) + len(SEPARATOR)
        if used + cost <= capacity:
            kept.append(scored)
            used += cost
    return kept, len(ranked) - len(kept), truncated


def assemble(state: RagState, deps: RagDeps) -> dict:
    """Fit the best top_n ranked passages into the token budget, keeping rank order."""
    settings = deps.settings.assemble
    top_n = state.get("top_n") or deps.settings.rerank.top_n
    ranked = (state.get("ranked") or [])[:top_n]  # a reranker already kept at most top_n
    with StageClock("assemble") as clock:
        passages, dropped, truncated = fit_budget(
            ranked, settings.token_budget, settings.chars_per_token
        )
        context = render_context(passages, settings.ordering)
        clock.note(
            passages=len(passages),
            dropped=dropped,
            truncated_first=truncated,
            tokens=estimate_tokens(context, settings.chars_per_token),
            token_budget=settings.token_budget,
            ordering=settings.ordering,
            layout=layout_order(len(passages), settings.ordering),
            suspicious=[m for m, p in enumerate(passages, start=1) if is_suspicious(p)],
        )
    return {"passages": passages, "trace": clock.trace()}
