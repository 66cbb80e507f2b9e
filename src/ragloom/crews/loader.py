"""Crew files to compiled graphs: find, validate, ingest the crew's collections, compile, run.

`load_crew(path)` returns the compiled LangGraph graph; `graph.invoke({"inputs": {...}})` returns
`{"result": CrewResult}`. Creating a crew ingests its `rag:` collections through the incremental
pipeline (a second load of unchanged sources computes no embeddings); the reports are part of
every result. By default runs are checkpointed per thread in SQLite under the data directory, so
a run can be inspected (`graph.get_state(config)`) or resumed after a failure
(`graph.invoke(None, config)` with the same `thread_id`).
"""

from __future__ import annotations

import importlib.resources
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragloom.crews.dialects import read_draft
from ragloom.crews.result import CrewResult, TaskOutput
from ragloom.crews.schema import CrewSpec, slug
from ragloom.crews.validate import validate
from ragloom.errors import ConfigError
from ragloom.settings import RagSettings, resolve_settings
from ragloom.state import IngestionReport, TraceStep

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.checkpoint.base import BaseCheckpointSaver

Checkpointer = Literal["sqlite"] | None
DEFAULT_THREAD = "default"
DEFAULT_COLLECTION = "default"
"""The crew collection name that stands for the configured collection."""
_URL = re.compile(r"^https?://", re.IGNORECASE)


def packaged_examples() -> dict[str, Path]:
    """The example crews shipped with ragloom, by name."""
    folder = importlib.resources.files("ragloom.crews") / "examples"
    return {Path(str(p)).stem: Path(str(p)) for p in folder.iterdir()
            if str(p).endswith((".yaml", ".yml"))}


def find_crew(path: str | Path) -> Path:
    """A crew path as given, or the packaged example of that name."""
    candidate = Path(path).expanduser()
    if candidate.exists():
        return candidate
    examples = packaged_examples()
    if str(path) in examples:
        return examples[str(path)]
    raise ConfigError("no such crew file or folder", where=str(path),
                      hint=f"pass a crew .yaml, a CrewAI project folder or a packaged example: "
                           f"{', '.join(sorted(examples))}")


def validate_crew(path: str | Path) -> CrewSpec:
    """Read and validate a crew (ragloom file or CrewAI project) without creating anything."""
    return validate(read_draft(find_crew(path)))


@dataclass
class Crew:
    """A created crew: its spec, compiled graph, ingestion reports and where it writes."""

    spec: CrewSpec
    graph: Any
    ingestion: list[IngestionReport]
    settings: RagSettings
    output_dir: Path
    checkpoints: Path | None


def _source_spec(source: str, base: Path) -> str:
    """A source resolved against the crew's folder (URLs and absolute paths kept)."""
    if _URL.match(source):
        return source
    path = Path(source).expanduser()
    return str(path if path.is_absolute() else base / path)


def collection_name(name: str, settings: RagSettings) -> str:
    """The collection a crew's collection `name` reads: `default` is the configured collection
    (`settings.collection`: `-c`, RAGLOOM_COLLECTION, the config file), any other name itself."""
    return settings.collection if name == DEFAULT_COLLECTION else name


def ingest_collections(spec: CrewSpec, settings: RagSettings) -> list[IngestionReport]:
    """Ingest every crew collection that lists sources, incrementally; one report each."""
    from ragloom.runner import ingest

    reports = []
    base = Path(spec.base_dir)
    for name, collection in spec.rag.collections.items():
        if not collection.sources:
            continue
        run_settings = settings
        if collection.chunking is not None:
            per_token = settings.assemble.chars_per_token
            chunk = collection.chunking
            run_settings = resolve_settings(settings, chunker={
                "name": chunk.strategy, "size": max(50, int(chunk.max_tokens * per_token)),
                "overlap": int(chunk.overlap * per_token)})
        sources = [_source_spec(s, base) for s in collection.sources]
        reports.append(ingest(sources, collection=collection_name(name, settings),
                              settings=run_settings))
    return reports


def _ingestion_notices(reports: list[IngestionReport]) -> list[str]:
    notices = []
    for report in reports:
        for source in [*report.failed, *report.quarantined]:
            why = "; ".join(source.errors) or ", ".join(source.signals)
            notices.append(f"collection {report.collection!r}: {source.status} "
                           f"{source.source_id}: {why}")
    return notices


def crew_dir(settings: RagSettings, spec: CrewSpec) -> Path:
    """The crew's folder under the data directory: <data_dir>/crews/<crew>."""
    from ragloom import resources

    return resources.data_paths(settings).data_dir / "crews" / slug(spec.name)


def checkpoint_path(settings: RagSettings, spec: CrewSpec) -> Path:
    """Where a crew's runs are checkpointed: <data_dir>/crews/<crew>/checkpoints.sqlite."""
    return crew_dir(settings, spec) / "checkpoints.sqlite"


def default_output_dir(settings: RagSettings, spec: CrewSpec) -> Path:
    """Where a crew's output files go by default: <data_dir>/crews/<crew>/outputs."""
    return crew_dir(settings, spec) / "outputs"


def _parts(spec: CrewSpec, settings: RagSettings, chat: BaseChatModel | None,
           reports: list[IngestionReport], output_dir: Path) -> Any:
    """The live parts of a crew: one performer per agent, one retrieval subgraph per knowledge."""
    from ragloom import registry, resources
    from ragloom.crews.agents import Performer, agent_loop, agent_tools
    from ragloom.crews.graph import CrewParts
    from ragloom.providers.chat import get_chat_model

    model = chat if chat is not None else get_chat_model(settings.chat)
    subgraphs: dict[tuple[str, str], Any] = {}
    performers = {}
    for agent_id, agent in spec.agents.items():
        profile = agent.profile or settings.profile
        for collection in agent.knowledge:
            subgraphs[(agent_id, collection)] = registry.retrieval_subgraph(resolve_settings(
                settings, profile=profile, collection=collection_name(collection, settings)),
                chat=chat)
        tools = agent_tools(agent, settings)
        loop = agent_loop(agent_id, agent, model, tools) if tools and model is not None else None
        performers[agent_id] = Performer(agent_id, agent, chat=model, settings=settings,
                                         embedder=resources.embedder(settings), loop=loop)
    return CrewParts(spec=spec, settings=settings, performers=performers, subgraphs=subgraphs,
                     output_dir=output_dir, ingestion=reports, chat=model)


def sqlite_checkpointer(path: Path) -> BaseCheckpointSaver:
    """A SQLite checkpointer at path that deserialises only ragloom's and LangChain's types."""
    import sqlite3

    try:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:
        raise ConfigError("crew checkpoints need langgraph-checkpoint-sqlite",
                          hint="pip install langgraph-checkpoint-sqlite, or pass checkpointer=None"
                          ) from exc
    from ragloom.crews.graph import Assignment
    from ragloom.state import Chunk, Citation, ScoredChunk, SourceResult

    path.parent.mkdir(parents=True, exist_ok=True)
    allowed = [Chunk, ScoredChunk, Citation, TraceStep, IngestionReport, SourceResult,
               TaskOutput, CrewResult, Assignment]
    serde = JsonPlusSerializer(allowed_msgpack_modules=allowed)
    return SqliteSaver(sqlite3.connect(str(path), check_same_thread=False), serde=serde)


def build_crew(path: str | Path, *, settings: RagSettings | None = None,
               data_dir: str | Path | None = None, config_file: str | Path | None = None,
               collection: str | None = None,
               chat: BaseChatModel | None = None,
               checkpointer: Checkpointer | BaseCheckpointSaver = "sqlite",
               output_dir: str | Path | None = None) -> Crew:
    """Validate a crew, ingest its collections and compile its graph."""
    from ragloom.crews.graph import build_crew_graph, recursion_limit

    spec = validate_crew(path)
    run_settings = resolve_settings(settings, config_file=config_file, data_dir=data_dir,
                                    collection=collection)
    reports = ingest_collections(spec, run_settings)
    spec = spec.model_copy(update={"notices": [*spec.notices, *_ingestion_notices(reports)]})
    out_dir = Path(output_dir) if output_dir is not None else default_output_dir(run_settings, spec)
    parts = _parts(spec, run_settings, chat, reports, out_dir)
    saver: Any = None
    db: Path | None = None
    if checkpointer == "sqlite":
        db = checkpoint_path(run_settings, spec)
        saver = sqlite_checkpointer(db)
    elif checkpointer is not None:
        saver = checkpointer
    compiled = build_crew_graph(parts).compile(checkpointer=saver, name=f"crew-{slug(spec.name)}")
    config: dict[str, Any] = {"recursion_limit": recursion_limit(spec)}
    if saver is not None:
        config["configurable"] = {"thread_id": DEFAULT_THREAD}
    crew = Crew(spec=spec, graph=None, ingestion=reports, settings=run_settings,
                output_dir=out_dir, checkpoints=db)
    crew.graph = compiled.with_config(**config)  # still a compiled graph, defaults bound
    crew.graph.ragloom_crew = crew  # read back by run_crew
    return crew


def load_crew(path: str | Path, **options: Any) -> Any:
    """Load a crew (ragloom YAML or CrewAI project) as a compiled LangGraph graph.

    Its collections are ingested first (incrementally). Invoke it with
    `{"inputs": {"placeholder": value, ...}}`; the output is `{"result": CrewResult}`. Options:
    settings, data_dir, config_file, collection (what the crew's collection `default` reads),
    chat (a LangChain chat model overriding the configured one),
    checkpointer ("sqlite" under the data directory, None, or a LangGraph checkpointer) and
    output_dir (where output_file paths are written).
    """
    return build_crew(path, **options).graph


def _crew_of(graph: Any) -> Crew:
    crew = getattr(graph, "ragloom_crew", None)
    if not isinstance(crew, Crew):
        raise ConfigError("not a crew graph", where="run_crew",
                          hint="pass the graph ragloom.load_crew returned")
    return crew


def new_thread_id() -> str:
    """A fresh thread id for one crew run."""
    return uuid.uuid4().hex[:12]


def _finished_result(crew: Crew, graph: Any, config: dict[str, Any],
                     thread_id: str | None) -> CrewResult | None:
    """The result of a thread's finished run; None when the run is unfinished (to continue)."""
    if crew.checkpoints is None and graph.checkpointer is None:
        raise ConfigError("resuming a crew run needs a checkpointer", where="run_crew",
                          hint='load the crew with checkpointer="sqlite" (the default)')
    state = graph.get_state(config)
    if not state.values:
        raise ConfigError(f"thread {thread_id or DEFAULT_THREAD!r} has no crew run to resume",
                          where="thread", hint="start a run first (without --resume)")
    return None if state.next else state.values.get("result")


def run_crew(graph: Any, inputs: dict[str, Any] | None = None, *, thread_id: str | None = None,
             resume: bool = False, recursion_limit: int | None = None) -> CrewResult:
    """Run a crew graph and return its CrewResult, never raising for a loop bound.

    `resume` continues the thread's unfinished run (or returns its finished result). A tripped
    recursion limit returns the outputs of the tasks that ran, the others listed as not run, the
    result best-effort, with a `circuit_breaker` trace step.
    """
    from langgraph.errors import GraphRecursionError

    from ragloom.crews.graph import crew_result

    crew = _crew_of(graph)
    config: dict[str, Any] = {}
    if thread_id is not None:
        config["configurable"] = {"thread_id": thread_id}
    if recursion_limit is not None:
        config["recursion_limit"] = recursion_limit
    if resume:
        finished = _finished_result(crew, graph, config, thread_id)
        if finished is not None:
            return finished
    outputs: dict[str, TaskOutput] = {}
    trace: list[TraceStep] = []
    result: CrewResult | None = None
    try:
        for update in graph.stream(None if resume else {"inputs": inputs or {}}, config=config,
                                   stream_mode="updates"):
            for values in update.values():
                outputs.update((values or {}).get("outputs") or {})
                trace.extend((values or {}).get("trace") or [])
                result = (values or {}).get("result") or result
    except GraphRecursionError as exc:
        breaker = TraceStep(stage="circuit_breaker", duration_ms=0.0,
                            detail={"error": str(exc).splitlines()[0],
                                    "reason": "crew recursion limit reached"})
        return crew_result(crew.spec, crew.ingestion, outputs, [*trace, breaker], stopped=True)
    assert result is not None, "a crew run always ends in finish"
    return result
