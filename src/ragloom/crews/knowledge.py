"""An agent's knowledge: fetched through the retrieval subgraph, numbered into one bounded block.

Each collection an agent knows is queried by its own node, which invokes the compiled retrieval
subgraph (transform → retrieve → fuse → rerank → assemble; never generation), so Studio shows
it as a subgraph. The task node then builds the agent's block: its own passages interleaved by rank
across collections and fitted to the token budget, then the passages cited by the outputs of its
context tasks, whose markers are renumbered into the block's, so that every `[n]` of every task
output resolves to a chunk. Passages found by the agent's `rag_search` calls join the same block.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragloom.crews.placeholders import interpolate, placeholders
from ragloom.crews.result import TaskOutput
from ragloom.crews.schema import TaskSpec
from ragloom.graphs.assembly import LangGraphNode
from ragloom.nodes.assemble import fit_budget
from ragloom.nodes.text import clip, marker_numbers
from ragloom.settings import RagSettings
from ragloom.nodes.trace import StageClock
from ragloom.state import ScoredChunk

_MARKER_GROUP = re.compile(r"\[(\s*\d+\s*(?:[,;]\s*\d+\s*)*)\]")


class Block:
    """The numbered passages one task's agent sees: `[n]` is `passages[n - 1]`."""

    def __init__(self, passages: Sequence[ScoredChunk] = ()) -> None:
        self.passages: list[ScoredChunk] = []
        self._markers: dict[str, int] = {}
        self._lock = threading.Lock()
        for scored in passages:
            self.add(scored)

    def add(self, scored: ScoredChunk) -> int:
        """The passage's marker, numbering it next when it is new (thread-safe for tool calls)."""
        with self._lock:
            marker = self._markers.get(scored.chunk.id)
            if marker is None:
                self.passages.append(scored)
                marker = self._markers[scored.chunk.id] = len(self.passages)
            return marker

    def __len__(self) -> int:
        """The number of passages in the block."""
        return len(self.passages)


def interleave(lists: Sequence[Sequence[ScoredChunk]]) -> list[ScoredChunk]:
    """One ranking from several: the first of each list, then the second of each, ... (deduped)."""
    merged: list[ScoredChunk] = []
    seen: set[str] = set()
    for rank in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if rank < len(items) and items[rank].chunk.id not in seen:
                seen.add(items[rank].chunk.id)
                merged.append(items[rank])
    return merged


def renumber(text: str, mapping: Mapping[int, int]) -> str:
    """The text with each `[n]` marker number replaced by mapping[n] (numbers not mapped dropped)."""

    def swap(match: re.Match[str]) -> str:
        """One marker group, renumbered."""
        numbers = [mapping[n] for n in marker_numbers(match.group(1)) if n in mapping]
        return f"[{', '.join(map(str, dict.fromkeys(numbers)))}]" if numbers else ""

    return _MARKER_GROUP.sub(swap, text)


def build_block(own: Sequence[Sequence[ScoredChunk]],
                inherited: Sequence[tuple[TaskOutput, Sequence[ScoredChunk]]],
                settings: RagSettings) -> tuple[Block, list[str], dict[str, Any]]:
    """The block of a task: its own passages within the token budget, then those its context
    tasks cited; returns the block, each context output's text renumbered into it, and counts."""
    ranked = interleave(own)
    kept, dropped, truncated = fit_budget(ranked, settings.assemble.token_budget,
                                          settings.assemble.chars_per_token)
    block = Block(kept)
    texts = []
    for output, passages in inherited:
        mapping = {c.marker: block.add(passages[c.marker - 1])
                   for c in output.citations if 0 < c.marker <= len(passages)}
        texts.append(renumber(output.text, mapping))
    detail = {"own_passages": len(kept), "dropped": dropped, "truncated_first": truncated,
              "inherited_passages": len(block) - len(kept)}
    return block, texts, detail


def retrieval_query(task: TaskSpec, inputs: Mapping[str, Any], max_chars: int) -> str:
    """What a task's knowledge is searched for: its `query`; else its description, without a
    leading instruction when it reads `<instruction>: <text with placeholders>` (so "Answer the
    customer's question: {question}" searches for the question)."""
    template = task.query or task.description
    if not task.query:
        head, colon, tail = template.partition(":")
        if colon and not placeholders(head) and placeholders(tail):
            template = tail
    text = interpolate(template, inputs).strip().strip("\"'").strip()
    return clip(" ".join(text.split()), max_chars)


def knowledge_key(task_id: str, collection: str) -> str:
    """State key of the passages a task's agent got from one collection."""
    return f"{task_id}/{collection}"


def knowledge_node(subgraph: Any, collection: str, current: Callable[[dict[str, Any]], TaskSpec],
                   top_n: int | None, max_chars: int) -> LangGraphNode:
    """A node querying one collection for the current task through the retrieval subgraph."""

    def knowledge(state: dict[str, Any]) -> dict[str, Any]:
        """Retrieve the current task's passages from this collection (no generation)."""
        task = current(state)
        with StageClock("knowledge") as clock:
            query = retrieval_query(task, state.get("inputs") or {}, max_chars)
            out = subgraph.invoke({"question": query, "top_n": top_n})
            passages = out.get("passages") or []
            clock.note(task=task.id, collection=collection, query=query, passages=len(passages))
        steps = [step.model_copy(update={"detail": {**step.detail, "task": task.id,
                                                    "collection": collection}})
                 for step in out.get("trace") or []]
        return {"knowledge": {knowledge_key(task.id, collection): passages},
                "trace": steps + clock.trace()}

    return knowledge
