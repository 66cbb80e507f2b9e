"""OpenTelemetry for the service: one server span per request and one span per pipeline phase
(guard, retrieve, rerank, prompt, llm, post) built from the answer's trace, with its stages'
timings and details as attributes; exported over OTLP/HTTP when `api.otlp_endpoint` is set.

LangSmith needs nothing here: LangChain traces every graph run when LANGSMITH_TRACING and a key
are in the environment; the service adds its trace id, route and collection as run metadata.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from ragloom.settings import ApiSettings
from ragloom.state import TraceStep

PHASES: dict[str, str] = {
    "guard": "guard", "input_guard": "guard", "classify": "guard",
    "transform": "retrieve", "retrieve": "retrieve", "fuse": "retrieve", "decompose": "retrieve",
    "hop": "retrieve", "bridge": "retrieve", "merge": "retrieve", "grade": "retrieve",
    "refine": "retrieve", "rewrite": "retrieve", "web": "retrieve",
    "rerank": "rerank",
    "assemble": "prompt",
    "generate": "llm", "direct": "llm",
}
"""The phase a stage belongs to; every other stage (checks, guards, the answer) is `post`."""
PHASE_ORDER = ("guard", "retrieve", "rerank", "prompt", "llm", "post")
StepEnds = dict[tuple[str, float], int]
"""When each trace step was seen ending: (stage, duration_ms) → epoch nanoseconds."""


def phase_of(stage: str) -> str:
    """The pipeline phase of a graph stage."""
    return PHASES.get(stage, "post")


def tracer_provider(settings: ApiSettings, exporter: SpanExporter | None = None) -> TracerProvider:
    """The service's own tracer provider (not the global one): OTLP when configured, plus an
    optional exporter (tests pass an in-memory one)."""
    provider = TracerProvider(resource=Resource.create({"service.name": settings.service_name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    if settings.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint)))
    return provider


def trace_id_of(span: trace.Span) -> str:
    """The 32-hex-digit trace id of a span."""
    return format(span.get_span_context().trace_id, "032x")


def _attribute(value: Any) -> Any:
    """A trace detail value as a span attribute (scalars as they are, the rest as text)."""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)[:500]


def _timeline(steps: Sequence[TraceStep], ends: StepEnds,
              start_ns: int) -> list[tuple[TraceStep, int, int]]:
    """(step, start, end) in epoch ns: a step ends when it was seen ending, else after the one
    before it."""
    placed = []
    cursor = start_ns
    for step in steps:
        length = int(step.duration_ms * 1e6)
        end = ends.get((step.stage, step.duration_ms), cursor + length)
        placed.append((step, end - length, end))
        cursor = max(cursor, end)
    return placed


def record_phases(tracer: trace.Tracer, parent: trace.Span, steps: Sequence[TraceStep],
                  ends: StepEnds, start_ns: int) -> None:
    """One child span per phase of the answer's trace, its stages' timings and details attached
    (a phase whose stages were all skipped is a zero-length span saying why)."""
    context = trace.set_span_in_context(parent)
    by_phase: dict[str, list[tuple[TraceStep, int, int]]] = {}
    for item in _timeline(steps, ends, start_ns):
        by_phase.setdefault(phase_of(item[0].stage), []).append(item)
    for phase in PHASE_ORDER:
        placed = by_phase.get(phase)
        if not placed:
            continue
        ran = [p for p in placed if not p[0].detail.get("skipped")]
        begin = min(p[1] for p in ran) if ran else placed[0][2]
        end = max(p[2] for p in ran) if ran else placed[0][2]
        span = tracer.start_span(phase, context=context, start_time=begin)
        span.set_attribute("rag.phase", phase)
        span.set_attribute("rag.stages", [p[0].stage for p in ran])
        span.set_attribute("rag.skipped", [p[0].stage for p in placed if p not in ran])
        for step, _, _ in placed:
            span.set_attribute(f"rag.{step.stage}.ms", step.duration_ms)
            for key, value in step.detail.items():
                span.set_attribute(f"rag.{step.stage}.{key}", _attribute(value))
        span.end(end_time=end)


def now_ns() -> int:
    """Wall-clock epoch nanoseconds (span timestamps)."""
    return time.time_ns()


def langsmith_enabled() -> bool:
    """True when LangChain will send graph runs to LangSmith (its environment is set)."""
    try:
        from langsmith.utils import tracing_is_enabled
    except ImportError:
        return False
    return bool(tracing_is_enabled())

