"""Run query graphs for the service through the one runner: each plan resolves its settings on
the server's, the graph comes from the registry (compiled once per settings), the collection
travels in the runtime context; chat-model calls are counted and step end times recorded for the
spans."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from ragloom import runner
from ragloom.api.telemetry import StepEnds, now_ns
from ragloom.runner import StreamEvent
from ragloom.settings import RagSettings
from ragloom.state import RagContext

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
    """The service's runs: each through the runner, on the server's resolved settings."""

    def __init__(self, settings: RagSettings) -> None:
        self.settings = settings

    @property
    def chat_configured(self) -> bool:
        """True when the service answers with a chat model (so it can fall back without one)."""
        return self.settings.chat.provider != "none"

    def run(self, plan: QueryPlan, *, offline: bool = False,
            config: dict[str, Any] | None = None) -> runner.Run:
        """The runner's Run of a plan (graph compiled on first use, shared by every request)."""
        overrides: dict[str, Any] = offline_layer(self.settings) if offline else {}
        if plan.top_k is not None:
            overrides["retrieval"] = {"candidate_k": plan.top_k}
        return runner.plan(plan.question, settings=self.settings,
                           profile=plan.profile, retrieval_only=plan.retrieval_only,
                           overrides=overrides, config=config,
                           context=RagContext(collection=plan.collection),
                           filters=plan.filters, top_n=plan.top_n)

    async def events(self, plan: QueryPlan, *, calls: ModelCalls, ends: StepEnds,
                     metadata: dict[str, Any], offline: bool = False
                     ) -> AsyncIterator[StreamEvent]:
        """Run a plan: each stage as it ends, the answer text as it is written, then the answer
        (a tripped recursion limit yields a best-effort one). Cancelling the iteration cancels
        the run."""
        config = {"callbacks": [calls], "metadata": metadata,
                  "run_name": f"ragloom-{plan.profile}"}
        async for event in runner.events(self.run(plan, offline=offline, config=config)):
            if event.kind == "stage":
                stamp = now_ns()
                for step in event.steps:
                    ends.setdefault((step.stage, step.duration_ms), stamp)
            yield event
