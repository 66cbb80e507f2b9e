"""Run the graphs behind the public face: ingest, ask and retrieve."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragloom import resources
from ragloom.graphs.ingest import build_ingest_graph
from ragloom.ingest.chunkers import get_chunker
from ragloom.nodes.ingest import IngestDeps, ingest_recursion_limit
from ragloom.errors import ConfigError
from ragloom.profiles.resolver import compile_graph, graph_builder
from ragloom.settings import RagSettings, resolve_settings
from ragloom.state import IngestionReport, RagAnswer, TraceStep
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
    data_dir: str | Path | None = None,
    settings: RagSettings | None = None,
    progress: ProgressFn | None = None,
) -> IngestionReport:
    """Ingest files, directories, globs or URLs into a collection, incrementally.

    Unchanged sources cost zero embeddings; changed ones are re-chunked; sources gone from a
    re-ingested directory or glob are removed. `progress(done, total)` is called per batch.
    """
    specs = [sources] if isinstance(sources, str) else list(sources)
    overrides: dict[str, Any] = {"collection": collection, "data_dir": data_dir}
    if chunker is not None:
        overrides["chunker"] = {"name": chunker}
    run_settings = resolve_settings(settings, **overrides)
    embedder = resources.embedder(run_settings)
    deps = IngestDeps(
        settings=run_settings,
        index=resources.document_index(run_settings),
        embedder=embedder,
        chunker=get_chunker(run_settings.chunker, embedder=embedder),
        paths=resources.data_paths(run_settings),
    )
    graph = build_ingest_graph(deps).compile().with_config(recursion_limit=ingest_recursion_limit())
    lock_path = deps.paths.data_dir / "locks" / f"{run_settings.collection}.lock"
    report: IngestionReport | None = None
    total = done = 0
    with collection_lock(lock_path):
        for update in graph.stream({"sources": specs, "reindex": reindex}, stream_mode="updates"):
            for node, values in update.items():
                if node == "plan":
                    total = len(values.get("pending", []))
                elif node in ("load", "finalize") and progress is not None:
                    done = total - len(values.get("pending", [])) if node == "load" else total
                    progress(done, total)
                if node == "finalize":
                    report = values["report"]
    assert report is not None, "the ingest graph always ends in finalize"
    return report


def _query_deps(profile: str | None, settings: RagSettings | None, **overrides: Any) -> Any:
    """Resolve settings for a query and return the shared live dependencies."""
    if settings is not None and profile not in (None, settings.profile):
        raise ConfigError(
            f"profile {profile!r} conflicts with the given settings (profile {settings.profile!r})",
            hint="pass settings built for that profile: load_settings(profile)",
        )
    run_settings = resolve_settings(settings, profile=profile, **overrides)
    graph_builder(run_settings.profile)
    return resources.rag_deps(run_settings)


def _run_query(question: str, *, profile: str | None, retrieval_only: bool, top_n: int | None,
               filters: dict[str, Any] | None, settings: RagSettings | None,
               **overrides: Any) -> RagAnswer:
    from langgraph.errors import GraphRecursionError

    deps = _query_deps(profile, settings, **overrides)
    graph = _graph_cache(deps, retrieval_only)
    payload = {"question": question, "filters": filters, "top_n": top_n}
    try:
        return graph.invoke(payload)["answer"]
    except GraphRecursionError as exc:
        return RagAnswer(
            question=question,
            text="I could not finish answering within the loop budget.",
            profile=deps.settings.profile,
            best_effort=True,
            trace=[TraceStep(stage="circuit_breaker", duration_ms=0.0,
                             detail={"error": str(exc).splitlines()[0]})],
        )


def _graph_cache(deps: Any, retrieval_only: bool) -> Any:
    key = (id(deps.index), deps.settings.model_dump_json(), retrieval_only)
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
) -> RagAnswer:
    """Answer a question from a collection: text with `[n]` markers, citations and a trace."""
    return _run_query(question, profile=profile, retrieval_only=False, top_n=top_n,
                      filters=filters, settings=settings, collection=collection, data_dir=data_dir)


def retrieve(
    question: str,
    *,
    collection: str | None = None,
    profile: str | None = None,
    top_n: int | None = None,
    filters: dict[str, Any] | None = None,
    data_dir: str | Path | None = None,
    settings: RagSettings | None = None,
) -> RagAnswer:
    """Run the retrieval-only graph: empty text, the assembled passages as citations."""
    return _run_query(question, profile=profile, retrieval_only=True, top_n=top_n,
                      filters=filters, settings=settings, collection=collection, data_dir=data_dir)
