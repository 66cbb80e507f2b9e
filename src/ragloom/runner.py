"""Run the graphs behind the public face: ingest, ask, retrieve and stream (sync and async)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel

from ragloom import resources
from ragloom.errors import ConfigError
from ragloom.profiles.resolver import compile_graph, graph_builder, recursion_limit
from ragloom.settings import RagSettings, resolve_settings
from ragloom.state import IngestionReport, RagAnswer, RagContext, TraceStep
from ragloom.stores.lock import collection_lock

ProgressFn = Callable[[int, int], None]

_graphs: dict[tuple[Any, ...], Any] = {}
_graphs_lock = threading.Lock()


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
    specs = [sources] if isinstance(sources, str) else list(sources)
    if changed is not None and reindex:
        raise ConfigError("a change feed (changed=...) cannot be combined with reindex=True",
                          hint="a reindex reads every source: drop one of the two")
    overrides: dict[str, Any] = {"collection": collection, "data_dir": data_dir}
    if chunker is not None:
        overrides["chunker"] = {"name": chunker}
    run_settings = resolve_settings(settings, **overrides)
    # ingest only: a query process never loads the loaders, validators and chunkers
    from ragloom.graphs.ingest import build_ingest_graph
    from ragloom.ingestion.chunkers import get_chunker
    from ragloom.nodes.ingest import SOURCE_DONE, IngestDeps, ingest_recursion_limit

    embedder = resources.embedder(run_settings)
    deps = IngestDeps(
        settings=run_settings,
        index=resources.document_index(run_settings),
        embedder=embedder,
        chunker=get_chunker(run_settings.chunker, embedder=embedder),
        paths=resources.data_paths(run_settings),
    )
    graph = build_ingest_graph(deps).compile().with_config(recursion_limit=ingest_recursion_limit())
    lock_path = deps.paths.lock_file(run_settings.collection)
    report: IngestionReport | None = None
    total = done = 0
    with collection_lock(lock_path):
        payload = {"sources": specs, "reindex": reindex,
                   "changed": None if changed is None else list(changed)}
        for mode, item in graph.stream(payload,
                                       stream_mode=["updates", "custom"]):
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


def _query_deps(profile: str | None, settings: RagSettings | None, **overrides: Any) -> Any:
    """Resolve settings for a query and return the shared live dependencies.

    An unknown collection is an UnknownCollectionError (a query never creates one).
    """
    run_settings = resolve_settings(settings, profile=profile, **overrides)
    graph_builder(run_settings.profile)
    resources.require_collection(run_settings)  # a query never creates a collection
    return resources.rag_deps(run_settings)


def breaker_answer(graph: Any, payload: dict[str, Any], exc: Exception) -> RagAnswer:
    """The best-effort answer of a run whose recursion limit tripped."""
    return RagAnswer(
        question=str(payload.get("question", "")),
        text="I could not finish answering within the loop budget.",
        profile=getattr(graph, "name", "").removeprefix("ragloom-").removesuffix("-retrieval"),
        best_effort=True,
        trace=[TraceStep(stage="circuit_breaker", duration_ms=0.0,
                         detail={"error": str(exc).splitlines()[0],
                                 "reason": "recursion limit reached"})],
    )


def _payload(question: str | dict[str, Any]) -> dict[str, Any]:
    """The graph input for a question or a whole input mapping."""
    return {"question": question} if isinstance(question, str) else dict(question)


def run_graph(graph: Any, question: str | dict[str, Any], *, context: RagContext | None = None,
              config: dict[str, Any] | None = None) -> RagAnswer:
    """Invoke a compiled query graph and return its RagAnswer, never raising for a loop.

    `question` is the question or the whole input (`{"question": ..., "filters": ..., "top_n": ...,
    "max_iterations": ...}`). A tripped recursion limit (`GraphRecursionError`) becomes a
    best-effort answer whose trace ends with a `circuit_breaker` step.
    """
    from langgraph.errors import GraphRecursionError

    payload = _payload(question)
    try:
        return graph.invoke(payload, config=config, context=context)["answer"]
    except GraphRecursionError as exc:
        return breaker_answer(graph, payload, exc)


async def arun_graph(graph: Any, question: str | dict[str, Any], *,
                     context: RagContext | None = None,
                     config: dict[str, Any] | None = None) -> RagAnswer:
    """`run_graph` for asyncio callers."""
    from langgraph.errors import GraphRecursionError

    payload = _payload(question)
    try:
        return (await graph.ainvoke(payload, config=config, context=context))["answer"]
    except GraphRecursionError as exc:
        return breaker_answer(graph, payload, exc)


class StreamEvent(BaseModel):
    """One event of `stream`: a stage that ended, a piece of the answer text, or the answer.

    `text` events carry the chat model's tokens as the generate stage writes them (its draft,
    before citation repair), or the extractive answer sentence by sentence; the last event is
    always `answer`, with the final RagAnswer (checked, repaired, with citations).
    """

    kind: Literal["stage", "text", "answer"]
    stage: str = ""
    text: str = ""
    answer: RagAnswer | None = None


ANSWER_NODES = frozenset({"answer", "iterative"})
"""Top-level nodes whose update carries the final answer (adaptive's delegates relay one)."""


def stream_events(mode: str, chunk: Any, namespace: tuple[str, ...],
                  streamed: list[bool]) -> Iterator[StreamEvent]:
    """StreamEvents of one item of a `stream_mode=["messages", "updates"]` stream."""
    from ragloom.nodes.text import split_sentences

    if mode == "messages":
        message, meta = chunk
        if meta.get("langgraph_node") == "generate" and isinstance(message.content, str) \
                and message.content:
            streamed[0] = True
            yield StreamEvent(kind="text", stage="generate", text=message.content)
        return
    for node, update in (chunk or {}).items():
        yield StreamEvent(kind="stage", stage=node)
        if node == "generate" and not streamed[0] and (update or {}).get("draft"):
            for sentence in split_sentences(update["draft"]):
                yield StreamEvent(kind="text", stage="generate", text=sentence.text + " ")
        if not namespace and node in ANSWER_NODES and (update or {}).get("answer") is not None:
            yield StreamEvent(kind="answer", answer=update["answer"])


def _stream_args(question: str, profile: str | None, retrieval_only: bool,
                 top_n: int | None, filters: dict[str, Any] | None,
                 settings: RagSettings | None, max_iterations: int | None,
                 **overrides: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(graph, input, config) of a streamed query."""
    deps = _query_deps(profile, settings, **overrides)
    graph = _graph_cache(deps, retrieval_only)
    payload: dict[str, Any] = {"question": question, "filters": filters, "top_n": top_n}
    config: dict[str, Any] = {}
    if max_iterations is not None:
        payload["max_iterations"] = max_iterations
        config["recursion_limit"] = recursion_limit(deps.settings, max_iterations)
    return graph, payload, config


def stream(question: str, *, collection: str | None = None, profile: str | None = None,
           retrieval_only: bool = False, top_n: int | None = None,
           filters: dict[str, Any] | None = None, data_dir: str | Path | None = None,
           settings: RagSettings | None = None,
           max_iterations: int | None = None) -> Iterator[StreamEvent]:
    """Answer a question as events: each stage as it ends, the answer text as it is written,
    then the final RagAnswer (a tripped recursion limit yields a best-effort one)."""
    from langgraph.errors import GraphRecursionError

    graph, payload, config = _stream_args(question, profile, retrieval_only, top_n, filters,
                                          settings, max_iterations, collection=collection,
                                          data_dir=data_dir)
    streamed = [False]
    try:
        for namespace, mode, chunk in graph.stream(payload, config=config or None,
                                                   stream_mode=["messages", "updates"],
                                                   subgraphs=True):
            yield from stream_events(mode, chunk, namespace, streamed)
    except GraphRecursionError as exc:
        yield StreamEvent(kind="answer", answer=breaker_answer(graph, payload, exc))


async def astream(question: str, *, collection: str | None = None, profile: str | None = None,
                  retrieval_only: bool = False, top_n: int | None = None,
                  filters: dict[str, Any] | None = None, data_dir: str | Path | None = None,
                  settings: RagSettings | None = None,
                  max_iterations: int | None = None) -> AsyncIterator[StreamEvent]:
    """`stream` for asyncio callers; cancelling the iteration cancels the run."""
    from langgraph.errors import GraphRecursionError

    graph, payload, config = _stream_args(question, profile, retrieval_only, top_n, filters,
                                          settings, max_iterations, collection=collection,
                                          data_dir=data_dir)
    streamed = [False]
    try:
        async for namespace, mode, chunk in graph.astream(payload, config=config or None,
                                                          stream_mode=["messages", "updates"],
                                                          subgraphs=True):
            for event in stream_events(mode, chunk, namespace, streamed):
                yield event
    except GraphRecursionError as exc:
        yield StreamEvent(kind="answer", answer=breaker_answer(graph, payload, exc))


def _run_query(question: str, *, profile: str | None, retrieval_only: bool, top_n: int | None,
               filters: dict[str, Any] | None, settings: RagSettings | None,
               max_iterations: int | None = None, **overrides: Any) -> RagAnswer:
    graph, payload, config = _stream_args(question, profile, retrieval_only, top_n, filters,
                                          settings, max_iterations, **overrides)
    return run_graph(graph, payload, config=config or None)


def _graph_cache(deps: Any, retrieval_only: bool) -> Any:
    """The compiled graph for these dependencies, compiled once (keyed on the settings and the
    identity of every live component; the cached graph keeps them alive, so ids stay unique)."""
    key = (id(deps.index), id(deps.embedder), id(deps.chat), id(deps.reranker),
           deps.settings.model_dump_json(), retrieval_only)
    with _graphs_lock:
        if key not in _graphs:
            if len(_graphs) > 16:
                _graphs.clear()
            _graphs[key] = compile_graph(deps, retrieval_only=retrieval_only)
        return _graphs[key]


def ask(
    question: str,
    *,
    collection: str | None = None,
    profile: str | None = None,
    top_n: int | None = None,
    filters: dict[str, Any] | None = None,
    data_dir: str | Path | None = None,
    settings: RagSettings | None = None,
    max_iterations: int | None = None,
) -> RagAnswer:
    """Answer a question from a collection: text with `[n]` markers, citations and a trace."""
    return _run_query(question, profile=profile, retrieval_only=False, top_n=top_n,
                      filters=filters, settings=settings, max_iterations=max_iterations,
                      collection=collection, data_dir=data_dir)


def retrieve(
    question: str,
    *,
    collection: str | None = None,
    profile: str | None = None,
    top_n: int | None = None,
    filters: dict[str, Any] | None = None,
    data_dir: str | Path | None = None,
    settings: RagSettings | None = None,
    max_iterations: int | None = None,
) -> RagAnswer:
    """Run the retrieval-only graph: empty text, the assembled passages as citations."""
    return _run_query(question, profile=profile, retrieval_only=True, top_n=top_n,
                      filters=filters, settings=settings, max_iterations=max_iterations,
                      collection=collection, data_dir=data_dir)


async def aask(question: str, **options: Any) -> RagAnswer:
    """`ask` for asyncio callers (the same keyword options)."""
    return await _arun_query(question, retrieval_only=False, **options)


async def aretrieve(question: str, **options: Any) -> RagAnswer:
    """`retrieve` for asyncio callers (the same keyword options)."""
    return await _arun_query(question, retrieval_only=True, **options)


async def _arun_query(question: str, *, retrieval_only: bool, profile: str | None = None,
                      top_n: int | None = None, filters: dict[str, Any] | None = None,
                      settings: RagSettings | None = None, max_iterations: int | None = None,
                      collection: str | None = None,
                      data_dir: str | Path | None = None) -> RagAnswer:
    graph, payload, config = _stream_args(question, profile, retrieval_only, top_n, filters,
                                          settings, max_iterations, collection=collection,
                                          data_dir=data_dir)
    return await arun_graph(graph, payload, config=config or None)
