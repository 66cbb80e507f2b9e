"""LangChain tools for agents: `rag_search`, `rag_ingest` and `rag_eval`.

Each is a `StructuredTool` with a pydantic argument schema, usable by any LangGraph agent (bind them
to a tool-calling chat model and run them in a `ToolNode`). Errors ragloom raises on purpose
(`RagloomError`: unknown profile, missing collection, bad question, ...) and invalid arguments come
back as text starting with `error:` so the model can read them and correct itself; anything else is
a bug and propagates.

The module-level tools resolve settings at call time (profile preset ← `RAGLOOM_CONFIG` ←
`RAGLOOM_*` environment); `build_tools(data_dir=..., collection=..., profile=...)` returns the same
three tools with those defaults bound, for an agent that should only see one knowledge base.
`rag_search` answers in the `content_and_artifact` format: the text the model reads has one
numbered passage per citation (`[n] source, location, score` then the passage), and the artifact
holds the citations as dicts for programmatic callers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, ValidationError

from ragloom.errors import RagloomError
from ragloom.state import Citation

PASSAGE_CHARS = 1200


class SearchArgs(BaseModel):
    """Arguments of rag_search."""

    query: str = Field(description="what to look for, as a question or keywords")
    collection: str | None = Field(None, description="collection to search (default: configured)")
    profile: str | None = Field(None, description="quality profile, e.g. fast, balanced, quality")
    top_n: int = Field(5, ge=1, le=50, description="number of passages to return")
    filters: dict[str, Any] | None = Field(
        None, description='metadata filter, e.g. {"source_type": "pdf"}')


class IngestArgs(BaseModel):
    """Arguments of rag_ingest."""

    sources: list[str] = Field(min_length=1, description="files, directories, globs or URLs")
    collection: str | None = Field(None, description="collection to ingest into (default: configured)")
    reindex: bool = Field(False, description="purge the collection and rebuild it")


class EvalArgs(BaseModel):
    """Arguments of rag_eval."""

    dataset: str = Field(description="golden .yaml file or BEIR directory")
    profiles: list[str] | None = Field(None, description="profiles to compare (default: balanced)")
    k: int = Field(5, ge=1, le=100, description="cut-off of recall@k")
    limit: int | None = Field(None, ge=1, description="evaluate only the first N cases")
    answers: bool = Field(True, description="also generate answers and score them (slower)")
    out_dir: str | None = Field(None, description="write JSON/Markdown/PNG reports here")


def _error(exc: Exception) -> str:
    return f"error: {exc}"


def _invalid_args(exc: ValidationError | Exception) -> str:
    if isinstance(exc, ValidationError):
        details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}"
                            for e in exc.errors())
        return f"error: invalid arguments: {details}"
    return f"error: invalid arguments: {exc}"


def _location(c: Citation) -> str:
    parts = [c.source_id]
    if c.metadata.get("page"):
        parts.append(f"page {c.metadata['page']}")
    if c.metadata.get("section"):
        parts.append(f"section {c.metadata['section']}")
    parts.append(f"chars {c.start}-{c.end}")
    return ", ".join(parts)


def format_passages(citations: list[Citation], texts: dict[str, str] | None = None,
                    max_chars: int = PASSAGE_CHARS) -> str:
    """Numbered passages for a model to read and cite as [n] (full chunk texts when given)."""
    if not citations:
        return "no passages found"
    blocks = []
    for c in citations:
        text = " ".join((texts or {}).get(c.chunk_id, c.snippet).split())[:max_chars]
        blocks.append(f"[{c.marker}] {_location(c)} (score {c.score:.3f}, {c.score_origin})\n{text}")
    return "\n\n".join(blocks)


class _Defaults(BaseModel):
    data_dir: Path | None = None
    collection: str | None = None
    profile: str | None = None
    config_file: Path | None = None


def _settings(defaults: _Defaults, *, profile: str | None = None,
              collection: str | None = None) -> Any:
    from ragloom.settings import resolve_settings

    return resolve_settings(profile=profile or defaults.profile, config_file=defaults.config_file,
                            data_dir=defaults.data_dir, collection=collection or defaults.collection)


def _search(defaults: _Defaults, query: str, collection: str | None = None,
            profile: str | None = None, top_n: int = 5,
            filters: dict[str, Any] | None = None) -> tuple[str, list[dict[str, Any]]]:
    from ragloom import resources
    from ragloom.runner import retrieve

    try:
        settings = _settings(defaults, profile=profile, collection=collection)
        result = retrieve(query, top_n=top_n, filters=filters, settings=settings)
        ids = [c.chunk_id for c in result.citations]
        chunks = resources.document_index(settings).get_chunks(ids) if ids else []
    except RagloomError as exc:
        return _error(exc), []
    texts = {chunk.id: chunk.text for chunk in chunks}
    header = (f"{len(result.citations)} passage(s) from collection {settings.collection!r} "
              f"(profile {settings.profile}); cite them as [n]:\n\n")
    artifact = [{**c.model_dump(), "text": texts.get(c.chunk_id, c.snippet)} for c in result.citations]
    return header + format_passages(result.citations, texts), artifact


def _ingest(defaults: _Defaults, sources: list[str], collection: str | None = None,
            reindex: bool = False) -> str:
    from ragloom.runner import ingest

    try:
        settings = _settings(defaults, collection=collection)
        report = ingest(sources, reindex=reindex, settings=settings)
    except RagloomError as exc:
        return _error(exc)
    counts = ", ".join(f"{n} {status}" for status in ("ingested", "updated", "unchanged", "removed",
                                                      "quarantined", "failed")
                       if (n := report.count(status)))
    lines = [f"collection {report.collection!r}: {counts or 'no sources'}; "
             f"{report.chunks_written} chunks written, {report.embeddings_computed} embeddings "
             f"computed in {report.total_ms / 1000:.1f} s"]
    for source in [*report.failed, *report.quarantined]:
        lines.append(f"{source.status}: {source.source_id}: "
                     f"{'; '.join(source.errors) or ', '.join(source.signals)}")
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines)


def _eval(defaults: _Defaults, dataset: str, profiles: list[str] | None = None, k: int = 5,
          limit: int | None = None, answers: bool = True, out_dir: str | None = None) -> str:
    from ragloom.evaluation.datasets import load_dataset
    from ragloom.evaluation.harness import run_eval
    from ragloom.evaluation.report import write_reports

    try:
        data = load_dataset(dataset)
        report = run_eval(data, profiles or [defaults.profile or "balanced"], k=k, limit=limit,
                          data_dir=defaults.data_dir, config_file=defaults.config_file,
                          answers=answers, judge="auto")
        written = write_reports(report, out_dir) if out_dir else {}
    except RagloomError as exc:
        return _error(exc)
    lines = [f"{report.dataset}: {report.cases} cases, judge {report.judge}"]
    for p in report.profiles:
        m = p.metrics
        parts = [f"recall@{k} {_num(m.get(f'recall@{k}'))}", f"MRR@10 {_num(m.get('mrr@10'))}",
                 f"nDCG@10 {_num(m.get('ndcg@10'))}"]
        if answers:
            parts += [f"expected hit {_num(m.get('expected_hit_rate'))}",
                      f"faithfulness {_num(m.get('faithfulness'))}",
                      f"ask p50 {_num(p.latency_ms.get('ask_p50'), 0)} ms"]
        lines.append(f"{p.profile}: " + ", ".join(parts))
    if written:
        lines.append("reports: " + ", ".join(str(path) for path in written.values()))
    return "\n".join(lines)


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _tool(func: Callable[..., Any], defaults: _Defaults, name: str, description: str,
          schema: type[BaseModel], **extra: Any) -> StructuredTool:
    bound = functools.partial(func, defaults)
    functools.update_wrapper(bound, func)
    return StructuredTool.from_function(
        func=bound, name=name, description=description, args_schema=schema,
        handle_validation_error=_invalid_args, **extra,
    )


def build_tools(*, data_dir: str | Path | None = None, collection: str | None = None,
                profile: str | None = None,
                config_file: str | Path | None = None) -> list[StructuredTool]:
    """rag_search, rag_ingest and rag_eval with these defaults bound (None: from settings)."""
    defaults = _Defaults(data_dir=data_dir, collection=collection, profile=profile,
                         config_file=config_file)
    return [
        _tool(_search, defaults, "rag_search",
              "Search the knowledge base and return numbered passages with their sources "
              "(file, page, character offsets) and scores. Cite a passage as [n] when you use it.",
              SearchArgs, response_format="content_and_artifact"),
        _tool(_ingest, defaults, "rag_ingest",
              "Add files, directories, globs or URLs to the knowledge base, incrementally: "
              "unchanged sources cost nothing. Returns what was ingested, skipped or failed.",
              IngestArgs),
        _tool(_eval, defaults, "rag_eval",
              "Evaluate retrieval and answer quality of profiles on a golden YAML set or a BEIR "
              "directory; returns recall@k, MRR@10, nDCG@10 and answer metrics per profile.",
              EvalArgs),
    ]


rag_search, rag_ingest, rag_eval = build_tools()
