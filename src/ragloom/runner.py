"""The one road from every surface to the graphs: resolve settings, take the graph from the
registry, run it.

The CLI, the Python API, the HTTP service (REST, GraphQL, SSE), crews, agent tools and the
LangChain retriever all call `plan` and then `invoke`, `ainvoke` or the event stream `events`
(`stream_run` is the same stream for synchronous callers). A run's recursion limit is derived here
from its own loop budget, and a tripped limit becomes a best-effort answer here, once.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel

from ragloom import registry, resources
from ragloom.errors import ConfigError
from ragloom.settings import RagSettings, resolve_settings
from ragloom.state import IngestionReport, RagAnswer, RagContext, RunInput, TraceStep
from ragloom.stores.lock import collection_lock

ProgressFn = Callable[[int, int], None]


def ingest(
    sources: str | Sequence[str],
    *,
    collection: str | None = None,
    chunker: str | None = None,
    reindex: bool = False,
    changed: Sequence[str] | None = None,
    data_dir: str | Path | None = None,
    settings: RagSettings | None = None,
    progress: ProgressFn | None = None,
) -> IngestionReport:
    """Ingest files, directories, globs or URLs into a collection, incrementally.

    Unchanged sources cost zero embeddings; changed ones are re-chunked; sources gone from a
    re-ingested directory or glob are removed. `changed` is a change feed (paths edited,
    created or deleted since the last run, from a file watcher or `git diff --name-only`): only
    those are looked at, so the run's cost follows the change, not the collection; a source it
    omits is left as recorded. `progress(done, total)` is called when the changed sources are
    known (0, total), after each changed source, and at the end.
    """
    from ragloom.nodes.ingest import SOURCE_DONE

    specs = [sources] if isinstance(sources, str) else list(sources)
    if changed is not None and reindex:
        raise ConfigError("a change feed (changed=...) cannot be combined with reindex=True",
                          hint="a reindex reads every source: drop one of the two")
    run_settings = resolve_settings(settings, collection=collection, data_dir=data_dir,
                                    chunker=None if chunker is None else {"name": chunker})
    graph = registry.ingest_graph(run_settings)
    lock_path = resources.data_paths(run_settings).lock_file(run_settings.collection)
    report: IngestionReport | None = None
    total = done = 0
    with collection_lock(lock_path):
        payload = {"sources": specs, "reindex": reindex,
                   "changed": None if changed is None else list(changed)}
        for mode, item in graph.stream(payload, stream_mode=["updates", "custom"]):
            chunk = cast(dict[str, Any], item)
            if mode == "custom":  # one event per changed source (nodes.ingest.SOURCE_DONE)
                if chunk.get("event") == SOURCE_DONE:
                    done += 1
                if progress is not None:
                    progress(min(done, total), total)
                continue
            for node, values in chunk.items():
                if node == "plan":
                    total = len(values.get("pending", []))
                    if progress is not None:
                        progress(0, total)
                elif node == "finalize":
                    report = values["report"]
                    if progress is not None:
                        progress(total, total)
    assert report is not None, "the ingest graph always ends in finalize"
    return report


@dataclass
class Run:
    """One prepared query run: the compiled graph, its typed input, config and context."""

    graph: Any
    input: RunInput
    config: dict[str, Any] = field(default_factory=dict)
    context: RagContext | None = None
    profile: str = ""


def run_input(question: str | RunInput | dict[str, Any], **knobs: Any) -> RunInput:
    """The typed input of a run: a question (with keyword knobs) or a whole input mapping;
    a malformed knob is a QueryError naming it."""
    if isinstance(question, RunInput):
        return question
    values = {"question": question} if isinstance(question, str) else dict(question)
    values.update({k: v for k, v in knobs.items() if v is not None})
    return RunInput.checked(values)


def _configured(graph: Any, given: RunInput, budget: int | None, *,
                config: dict[str, Any] | None = None, context: RagContext | None = None,
                profile: str = "") -> Run:
    """A Run whose recursion limit follows its own loop budget (the input's, else `budget`)."""
    own = given.max_iterations if given.max_iterations is not None else budget
    merged = dict(config or {})
    if own is not None:
        merged["recursion_limit"] = registry.recursion_limit(own)
    if given.thread is not None:
        merged["configurable"] = {**merged.get("configurable", {}), "thread_id": given.thread}
    return Run(graph=graph, input=given, config=merged, context=context, profile=profile)


def plan(question: str | RunInput | dict[str, Any], *, settings: RagSettings | None = None,
         profile: str | None = None, retrieval_only: bool = False,
         collection: str | None = None, data_dir: str | Path | None = None,
         config: dict[str, Any] | None = None, context: RagContext | None = None,
         overrides: dict[str, Any] | None = None, **knobs: Any) -> Run:
    """Prepare a query run: settings resolved (the one resolver), the graph from the registry,
    the input typed. `knobs` are the per-run input (top_n, filters, max_iterations, lang,
    ranking, thread); `overrides` are settings applied on top, key by key."""
    given = run_input(question, **knobs)
    run_settings = resolve_settings(settings, profile=profile, collection=collection,
                                    data_dir=data_dir, **(overrides or {}))
    graph = registry.query_graph(run_settings, retrieval_only=retrieval_only)
    if context is None or not context.collection:
        resources.require_collection(run_settings)  # a query never creates a collection
    return _configured(graph, given, run_settings.loop.max_iterations, config=config,
                       context=context, profile=run_settings.profile)


def breaker_answer(run: Run, exc: Exception) -> RagAnswer:
    """The best-effort answer of a run whose recursion limit tripped."""
    name = getattr(run.graph, "name", "") or ""
    return RagAnswer(
        question=run.input.question,
        text="I could not finish answering within the loop budget.",
        profile=run.profile or name.removeprefix("ragloom-").removesuffix("-retrieval"),
        best_effort=True,
        trace=[TraceStep(stage="circuit_breaker", duration_ms=0.0,
                         detail={"error": str(exc).splitlines()[0],
                                 "reason": "recursion limit reached"})],
    )


@contextmanager
def _breaker(run: Run, answered: list[RagAnswer]) -> Iterator[None]:
    """Turn a tripped recursion limit inside the block into the run's best-effort answer."""
    from langgraph.errors import GraphRecursionError

    try:
        yield
    except GraphRecursionError as exc:
        answered.append(breaker_answer(run, exc))


def invoke(run: Run) -> RagAnswer:
    """Run to the end and return the RagAnswer, never raising for a loop bound."""
    answered: list[RagAnswer] = []
    with _breaker(run, answered):
        answered.append(run.graph.invoke(run.input.graph_input(), config=run.config or None,
                                         context=run.context)["answer"])
    return answered[-1]


async def ainvoke(run: Run) -> RagAnswer:
    """`invoke` for asyncio callers."""
    answered: list[RagAnswer] = []
    with _breaker(run, answered):
        result = await run.graph.ainvoke(run.input.graph_input(), config=run.config or None,
                                         context=run.context)
        answered.append(result["answer"])
    return answered[-1]


class StreamEvent(BaseModel):
    """One event of a run: a stage that ended, a piece of the answer text, or the answer.

    `stage` events carry the trace steps the stage wrote (`steps`); `text` events carry the chat
    model's tokens as the generate stage writes them (its draft, before citation repair), or the
    extractive answer sentence by sentence; the last event is always `answer`, with the final
    RagAnswer (checked, repaired, with citations).
    """

    kind: Literal["stage", "text", "answer"]
    stage: str = ""
    text: str = ""
    steps: list[TraceStep] = []
    answer: RagAnswer | None = None


def _events_of(mode: str, chunk: Any, namespace: tuple[str, ...],
               streamed: list[bool]) -> Iterator[StreamEvent]:
    """StreamEvents of one item of a `messages` + `updates` stream (subgraphs included)."""
    from ragloom.sentences import split_sentences

    if mode == "messages":
        message, meta = chunk
        if meta.get("langgraph_node") == "generate" and isinstance(message.content, str) \
                and message.content:
            streamed[0] = True
            yield StreamEvent(kind="text", stage="generate", text=message.content)
        return
    for node, update in (chunk or {}).items():
        values = update if isinstance(update, dict) else {}
        yield StreamEvent(kind="stage", stage=node, steps=list(values.get("trace") or []))
        if node == "generate" and not streamed[0] and values.get("draft"):
            for sentence in split_sentences(values["draft"]):
                yield StreamEvent(kind="text", stage="generate", text=sentence.text + " ")


async def events(run: Run) -> AsyncIterator[StreamEvent]:
    """The run as events: each stage as it ends, the answer text as it is written, then the
    answer (a tripped recursion limit yields a best-effort one). Cancelling the iteration
    cancels the run."""
    streamed = [False]
    answered: list[RagAnswer] = []
    with _breaker(run, answered):
        async for namespace, mode, chunk in run.graph.astream(
                run.input.graph_input(), config=run.config or None, context=run.context,
                stream_mode=["messages", "updates", "values"], subgraphs=True):
            if mode == "values":
                if not namespace and (chunk or {}).get("answer") is not None:
                    answered.append(chunk["answer"])
                continue
            for event in _events_of(mode, chunk, namespace, streamed):
                yield event
    assert answered, "a query graph always ends with its answer"
    yield StreamEvent(kind="answer", answer=answered[-1])


_DONE = object()


def stream_run(run: Run) -> Iterator[StreamEvent]:
    """`events` for synchronous callers: the same stream, driven on a worker thread; leaving
    the iteration early cancels the run."""
    items: queue.Queue[Any] = queue.Queue()
    stop = threading.Event()

    async def pump() -> None:
        async for event in events(run):
            items.put(event)
            if stop.is_set():
                return

    def work() -> None:
        try:
            asyncio.run(pump())
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, re-raised there
            items.put(exc)
        finally:
            items.put(_DONE)

    worker = threading.Thread(target=work, name="ragloom-stream", daemon=True)
    worker.start()
    try:
        while (item := items.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def run_graph(graph: Any, question: str | dict[str, Any], *, context: RagContext | None = None,
              config: dict[str, Any] | None = None) -> RagAnswer:
    """Invoke a compiled query graph (`build_graph`) and return its RagAnswer, never raising
    for a loop bound.

    `question` is the question or the whole input (`{"question": ..., "filters": ..., "top_n":
    ..., "max_iterations": ...}`); a run's `max_iterations` sets its recursion limit. A tripped
    limit becomes a best-effort answer whose trace ends with a `circuit_breaker` step.
    """
    return invoke(_configured(graph, run_input(question), None, config=config, context=context))


async def arun_graph(graph: Any, question: str | dict[str, Any], *,
                     context: RagContext | None = None,
                     config: dict[str, Any] | None = None) -> RagAnswer:
    """`run_graph` for asyncio callers."""
    return await ainvoke(_configured(graph, run_input(question), None, config=config,
                                     context=context))


def ask(question: str, *, collection: str | None = None, profile: str | None = None,
        top_n: int | None = None, filters: dict[str, Any] | None = None,
        data_dir: str | Path | None = None, settings: RagSettings | None = None,
        max_iterations: int | None = None) -> RagAnswer:
    """Answer a question from a collection: text with `[n]` markers, citations and a trace."""
    return invoke(plan(question, settings=settings, profile=profile, collection=collection,
                       data_dir=data_dir, top_n=top_n, filters=filters,
                       max_iterations=max_iterations))


def retrieve(question: str, *, collection: str | None = None, profile: str | None = None,
             top_n: int | None = None, filters: dict[str, Any] | None = None,
             data_dir: str | Path | None = None, settings: RagSettings | None = None,
             max_iterations: int | None = None) -> RagAnswer:
    """Run the retrieval-only graph: empty text, the assembled passages as citations."""
    return invoke(plan(question, settings=settings, profile=profile, retrieval_only=True,
                       collection=collection, data_dir=data_dir, top_n=top_n, filters=filters,
                       max_iterations=max_iterations))


async def aask(question: str, **options: Any) -> RagAnswer:
    """`ask` for asyncio callers (the same keyword options)."""
    return await ainvoke(plan(question, **options))


async def aretrieve(question: str, **options: Any) -> RagAnswer:
    """`retrieve` for asyncio callers (the same keyword options)."""
    return await ainvoke(plan(question, retrieval_only=True, **options))


def stream(question: str, **options: Any) -> Iterator[StreamEvent]:
    """Answer a question as events (`plan`'s keyword options: collection, profile,
    retrieval_only, top_n, filters, data_dir, settings, max_iterations, ...): each stage as it
    ends, the answer text as it is written, then the final RagAnswer (a tripped recursion limit
    yields a best-effort one)."""
    return stream_run(plan(question, **options))


async def astream(question: str, **options: Any) -> AsyncIterator[StreamEvent]:
    """`stream` for asyncio callers; cancelling the iteration cancels the run."""
    async for event in events(plan(question, **options)):
        yield event
