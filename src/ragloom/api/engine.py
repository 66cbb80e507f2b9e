"""Run query graphs for the service: one compiled graph per (profile, top_k, offline), reused by
every request and collection (the collection travels in the runtime context), events as they come,
chat-model calls counted, step end times recorded for the spans."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from ragloom import resources
from ragloom.api.telemetry import StepEnds, now_ns
from ragloom.nodes.deps import RagDeps
from ragloom.profiles.resolver import compile_graph, graph_builder
from ragloom.runner import StreamEvent, breaker_answer, stream_events
from ragloom.settings import RagSettings, resolve_settings
from ragloom.state import RagContext

POOL_SIZE = 32
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class QueryPlan:
    """Everything that decides one run: the question, where it reads and the per-run knobs."""

    question: str
    collection: str
    profile: str
    retrieval_only: bool = False
    filters: dict[str, Any] | None = None
    top_k: int | None = None
    top_n: int | None = None


class ModelCalls(BaseCallbackHandler):
    """Counts a run's chat-model calls, failures and tokens (reported, else estimated)."""

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.estimated = False
        self.last_error = ""
        self._prompt_chars: dict[Any, int] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[Any]],
                            **kwargs: Any) -> None:
        """Count a call and (provisionally) its prompt tokens."""
        chars = sum(len(str(m.content)) for batch in messages for m in batch)
        with self._lock:
            self.calls += 1
            self._prompt_chars[kwargs.get("run_id")] = chars

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        """Add the tokens the model reported, or an estimate from the text lengths."""
        usage = None
        text = ""
        for generations in response.generations:
            for generation in generations:
                text += generation.text
                message = getattr(generation, "message", None)
                usage = getattr(message, "usage_metadata", None) or usage
        with self._lock:
            prompt_chars = self._prompt_chars.pop(kwargs.get("run_id"), 0)
            if usage:
                self.prompt_tokens += int(usage.get("input_tokens", 0))
                self.completion_tokens += int(usage.get("output_tokens", 0))
            else:
                self.estimated = True
                self.prompt_tokens += prompt_chars // CHARS_PER_TOKEN
                self.completion_tokens += len(text) // CHARS_PER_TOKEN

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        """Count a failed call (time-out, refused connection, server error)."""
        with self._lock:
            self._prompt_chars.pop(kwargs.get("run_id"), None)
            self.errors += 1
            self.last_error = f"{type(error).__name__}: {error}".splitlines()[0][:300]


def offline_layer(settings: RagSettings) -> dict[str, Any]:
    """Overrides that answer without the chat model: extractive generation, heuristic checks."""
    layer: dict[str, Any] = {
        "chat": {"provider": "none"},
        "groundedness": {"checker": "heuristic"},
        "grade": {"grader": "heuristic"},
        "adaptive": {"classifier": "heuristic"},
    }
    if settings.transform.name != "none":
        layer["transform"] = {"name": "none"}
    if settings.rerank.name == "llm":
        layer["rerank"] = {"name": "none"}
    return layer


class Engine:
    """Compiled graphs, pooled, and the runs over them."""

    def __init__(self, settings: RagSettings) -> None:
        self.settings = settings
        self._pool: OrderedDict[tuple[Any, ...], tuple[Any, RagDeps]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def chat_configured(self) -> bool:
        """True when the service answers with a chat model (so it can fall back without one)."""
        return self.settings.chat.provider != "none"

    def graph(self, plan: QueryPlan, *, offline: bool = False) -> tuple[Any, RagDeps]:
        """The compiled graph (and its dependencies) for a plan, compiled on first use."""
        key = (plan.profile, plan.top_k, plan.retrieval_only, offline)
        with self._lock:
            if key in self._pool:
                self._pool.move_to_end(key)
                return self._pool[key]
        graph_builder(plan.profile)
        layer: dict[str, Any] = offline_layer(self.settings) if offline else {}
        if plan.top_k is not None:
            layer["retrieval"] = {"candidate_k": plan.top_k}
        settings = resolve_settings(self.settings, profile=plan.profile, **layer)
        deps = resources.rag_deps(settings)
        compiled = compile_graph(deps, retrieval_only=plan.retrieval_only)
        with self._lock:
            self._pool[key] = (compiled, deps)
            while len(self._pool) > POOL_SIZE:
                self._pool.popitem(last=False)
        return compiled, deps

    async def events(self, plan: QueryPlan, *, calls: ModelCalls, ends: StepEnds,
                     metadata: dict[str, Any], offline: bool = False
                     ) -> AsyncIterator[StreamEvent]:
        """Run a plan: each stage as it ends, the answer text as it is written, then the answer
        (a tripped recursion limit yields a best-effort one). Cancelling the iteration cancels
        the run."""
        from langgraph.errors import GraphRecursionError

        graph, _ = self.graph(plan, offline=offline)
        payload = {"question": plan.question, "filters": plan.filters, "top_n": plan.top_n}
        config = {"callbacks": [calls], "metadata": metadata,
                  "run_name": f"ragloom-{plan.profile}"}
        streamed = [False]
        try:
            async for namespace, mode, chunk in graph.astream(
                    payload, config=config, context=RagContext(collection=plan.collection),
                    stream_mode=["messages", "updates"], subgraphs=True):
                if mode == "updates":
                    _record_ends(chunk, ends)
                for event in stream_events(mode, chunk, namespace, streamed):
                    yield event
        except GraphRecursionError as exc:
            yield StreamEvent(kind="answer", answer=breaker_answer(graph, payload, exc))


def _record_ends(update: Any, ends: StepEnds) -> None:
    """Note when each trace step of an update was first seen (its end, give or take a hop)."""
    stamp = now_ns()
    for values in (update or {}).values():
        for step in (values or {}).get("trace", []) if isinstance(values, dict) else []:
            ends.setdefault((step.stage, step.duration_ms), stamp)
