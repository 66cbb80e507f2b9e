"""The service's one code path: REST, Server-Sent Events and GraphQL all call `RagService`.

A query is prepared (collection and profile checked, the key's scope turned into filters, the
cache key made from the normalised query, filters, profile and collection revision), then run:
a cache hit answers at once; otherwise the graph runs under the request deadline. A chat model
that fails or times out makes the answer a 504 that carries a best-effort answer: the graph's own
(when its nodes fell back) or one made again without the chat model (extractive, heuristic).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import trace

from ragloom import __version__, resources, runner
from ragloom.api.accesslog import pseudonym
from ragloom.api.cache import AnswerCache, MemoryCache, NoCache, RedisCache, cache_key
from ragloom.api.catalog import Catalog
from ragloom.api.engine import Engine, ModelCalls, QueryPlan
from ragloom.api.errors import ServiceError
from ragloom.api.filters import BU, request_filters, scoped_bu
from ragloom.api.keys import KeyStore, Principal
from ragloom.api.models import (
    AskResponse,
    CitationOut,
    CollectionInfo,
    CollectionsResponse,
    DocumentIn,
    ErrorBody,
    HealthResponse,
    IngestRequest,
    IngestResponse,
    Metrics,
    QueryRequest,
    SourceText,
    Tokens,
)
from ragloom.api.ratelimit import RateLimiter, limits_storage
from ragloom.api.stats import MemoryStats, RedisStats, StatsStore, render
from ragloom.api.telemetry import (
    StepEnds,
    langsmith_enabled,
    record_phases,
    trace_id_of,
    tracer_provider,
)
from ragloom.errors import ChatUnavailableError, RagloomError, UnknownNameError
from ragloom.profiles.presets import profile_names
from ragloom.settings import RagSettings
from ragloom.state import RagAnswer, TraceStep

FALLBACK_TIMEOUT_S = 15.0
"""Longest time the answer made again without the chat model may take."""
RESERVED_META = frozenset({"title"})


@dataclass
class RequestContext:
    """What the request envelope (middleware) and the handlers share about one request."""

    span: trace.Span
    start_ns: int
    started: float
    record: dict[str, Any] = field(default_factory=dict)
    """The fields of the request's log line; handlers add to it."""

    @property
    def trace_id(self) -> str:
        """The request's trace id (32 hex digits)."""
        return trace_id_of(self.span)

    def elapsed_ms(self) -> float:
        """Milliseconds since the request arrived."""
        return round((time.perf_counter() - self.started) * 1000.0, 3)


@dataclass
class Prepared:
    """A checked query, ready to run."""

    request: QueryRequest
    principal: Principal
    plan: QueryPlan
    cache_key: str


@dataclass
class Outcome:
    """How a query ended: its status, its response, and for a failure the error body."""

    status: int
    response: AskResponse | None
    error: ErrorBody | None = None


def _log_salt(data_dir: Path) -> str:
    """The data directory's salt for pseudonyms in logs (made once, shared by workers)."""
    path = data_dir / "api" / "log-salt"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_text(encoding="utf-8").strip()
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_hex(16))
        return path.read_text(encoding="utf-8").strip()


def _verdict(answer: RagAnswer, stage: str) -> str | None:
    """The last verdict a stage recorded, or None."""
    found = [v.verdict for v in answer.verdicts if v.stage == stage]
    return found[-1] if found else None


def stage_latencies(trace_steps: list[TraceStep]) -> dict[str, float]:
    """Milliseconds per stage that ran (repeated stages summed)."""
    latency: dict[str, float] = {}
    for step in trace_steps:
        if not step.detail.get("skipped"):
            latency[step.stage] = round(latency.get(step.stage, 0.0) + step.duration_ms, 3)
    return latency


def _front_matter(doc: DocumentIn, bu: str | None) -> str:
    """A document as Markdown with its metadata in YAML front matter (what ingest reads)."""
    import yaml

    meta: dict[str, Any] = {"title": doc.title, "lang": doc.lang, "bu": bu, "type": doc.type}
    if doc.last_modified is not None:
        meta["last_modified"] = doc.last_modified.timestamp()
    present = {k: v for k, v in meta.items() if v is not None}
    head = f"---\n{yaml.safe_dump(present, sort_keys=True)}---\n\n" if present else ""
    return head + doc.text


class RagService:
    """Keys, cache, rate limits, stats, telemetry and the query engine of one server process."""

    def __init__(self, settings: RagSettings, *, span_exporter: Any = None) -> None:
        api = settings.api
        self.settings = settings
        self.keys = KeyStore(api.keys_file)
        self.catalog = Catalog(settings)
        self.engine = Engine(settings)
        data_dir = self.catalog.paths.data_dir
        self.namespace = "ragloom:" + hashlib.sha256(str(data_dir).encode()).hexdigest()[:12] + ":"
        self.redis: Any = None
        self.cache: AnswerCache
        self.stats: StatsStore
        if api.redis_url:
            import redis.asyncio as aioredis

            self.redis = aioredis.Redis.from_url(api.redis_url)
            self.cache = RedisCache(self.redis, api.cache_ttl_s, self.namespace + "cache:")
            self.stats = RedisStats(self.redis, self.namespace + "stats:")
        else:
            self.cache = MemoryCache(api.cache_ttl_s, api.cache_max_entries)
            self.stats = MemoryStats()
        if api.cache_ttl_s == 0:
            self.cache = NoCache()
        self.limiter = RateLimiter(limits_storage(api.redis_url, self.namespace + "limits"),
                                   per_key=api.rate_limit, per_ip=api.anonymous_rate_limit)
        self.provider = tracer_provider(api, span_exporter)
        self.tracer = self.provider.get_tracer("ragloom.api")
        self.salt = _log_salt(data_dir)

    def warm(self) -> None:
        """Load the models and compile the default profile's graphs before the first request."""
        for retrieval_only in (False, True):
            self.engine.run(QueryPlan(question="warm up", collection=self.settings.collection,
                                      profile=self.settings.profile,
                                      retrieval_only=retrieval_only))
        resources.embedder(self.settings).embed_query("warm up")

    async def close(self) -> None:
        """Flush spans and close the Redis connections (they reopen if the app starts again)."""
        self.provider.force_flush()
        if self.redis is not None:
            await self.redis.aclose()

    # ---------------------------------------------------------------- access

    async def authorize(self, secret: str | None, client: str, *, scope: str = "read",
                        context: RequestContext | None = None) -> Principal:
        """The caller's principal, after its key (401), scope (403) and rate limit (429)."""
        principal = self.keys.authenticate(secret, client)
        if context is not None:
            context.record["key"] = principal.key
        if scope not in principal.scopes:
            hint = ("configure api.keys_file and use a key made with `ragloom api-key --ingest`"
                    if principal.key is None else "ask for a key with the ingest scope")
            raise ServiceError(403, f"this request needs the {scope!r} scope", where="API key",
                               hint=hint)
        await self.limiter.check(principal)
        return principal

    # ---------------------------------------------------------------- queries

    def prepare(self, request: QueryRequest, principal: Principal, *,
                retrieval_only: bool) -> Prepared:
        """Check a query (404 unknown collection, 422 unknown profile, 403 foreign business unit)
        and key its answer in the cache."""
        collection = self.catalog.require(request.collection or self.settings.collection,
                                          principal)
        profile = request.profile or self.settings.profile
        if profile not in profile_names():
            raise UnknownNameError("profile", profile, profile_names())
        filters = request_filters(request, principal)
        plan = QueryPlan(question=request.query, collection=collection, profile=profile,
                         retrieval_only=retrieval_only, filters=filters, top_k=request.top_k,
                         top_n=request.top_n)
        key = cache_key(query=request.query, filters=filters, profile=profile,
                        collection=collection, revision=self.catalog.revision(collection),
                        retrieval_only=retrieval_only, top_k=request.top_k,
                        top_n=request.top_n)
        return Prepared(request=request, principal=principal, plan=plan, cache_key=key)

    async def run(self, prepared: Prepared,
                  context: RequestContext) -> AsyncIterator[runner.StreamEvent | Outcome]:
        """Answer a prepared query: stage and text events as they come, then the Outcome.

        Cancelling the iteration (a client that went away) cancels the run; the log line then
        says `cancelled`.
        """
        plan = prepared.plan
        record = context.record
        record.update(collection=plan.collection, profile=plan.profile,
                      user=pseudonym(prepared.request.user_id or prepared.principal.identity,
                                     self.salt))
        cached = await self.cache.get(prepared.cache_key)
        if cached is not None:
            response = self._from_cache(cached, context)
            record.update(cache="hit", **self._record_fields(response))
            yield runner.StreamEvent(kind="text", stage="cache", text=response.answer)
            yield Outcome(200, response)
            return
        record["cache"] = "miss"
        calls = ModelCalls()
        ends: StepEnds = {}
        answer: RagAnswer | None = None
        failure: RagloomError | None = None
        try:
            async with asyncio.timeout(self.settings.api.request_timeout_s):
                async for event in self.engine.events(plan, calls=calls, ends=ends,
                                                      metadata=self._run_metadata(context)):
                    if event.kind == "answer":
                        answer = event.answer
                    else:
                        yield event
        except ChatUnavailableError as exc:
            failure = exc
        except TimeoutError:
            failure = ServiceError(504, "the answer took longer than the request deadline of "
                                   f"{self.settings.api.request_timeout_s:g} s",
                                   where="api.request_timeout_s",
                                   hint="raise api.request_timeout_s or chat.timeout_s")
        except (asyncio.CancelledError, GeneratorExit):
            record["cancelled"] = True
            raise
        if failure is None and calls.errors:
            failure = ChatUnavailableError(
                f"the chat model failed {calls.errors} time(s): {calls.last_error}",
                where="settings.chat", hint="check chat.base_url or raise chat.timeout_s")
        if failure is not None and answer is None and self.engine.chat_configured:
            answer = await self._offline_answer(plan, failure, ends, context)
        if answer is None:
            assert failure is not None, "a run without an answer failed"
            yield self._failed(failure, None, context)
            return
        response = self._response(answer, plan, calls, context)
        record_phases(self.tracer, context.span, answer.trace, ends, context.start_ns)
        record.update(cache="miss", **self._record_fields(response))
        if failure is not None:
            yield self._failed(failure, response, context)
            return
        if not answer.best_effort:
            await self.cache.set(prepared.cache_key, response.model_dump_json().encode())
        yield Outcome(200, response)

    async def answer(self, prepared: Prepared, context: RequestContext) -> Outcome:
        """Run a prepared query to its Outcome (the events are not needed)."""
        outcome: Outcome | None = None
        async for item in self.run(prepared, context):
            if isinstance(item, Outcome):
                outcome = item
        assert outcome is not None, "a run always ends with an Outcome"
        return outcome

    def _run_metadata(self, context: RequestContext) -> dict[str, Any]:
        """Metadata of the graph run (LangSmith shows it when tracing is on)."""
        return {"trace_id": context.trace_id, "route": context.record.get("route", ""),
                "collection": context.record.get("collection", "")}

    async def _offline_answer(self, plan: QueryPlan, failure: RagloomError, ends: StepEnds,
                              context: RequestContext) -> RagAnswer | None:
        """The answer made again without the chat model, traced as a fallback; None if that
        fails too."""
        started = time.perf_counter()
        answer = None
        try:
            async with asyncio.timeout(min(FALLBACK_TIMEOUT_S,
                                           self.settings.api.request_timeout_s)):
                async for event in self.engine.events(plan, calls=ModelCalls(), ends=ends,
                                                      metadata=self._run_metadata(context),
                                                      offline=True):
                    if event.kind == "answer":
                        answer = event.answer
        except (RagloomError, TimeoutError):
            return None
        if answer is None:
            return None
        step = TraceStep(stage="chat_fallback",
                         duration_ms=round((time.perf_counter() - started) * 1000.0, 3),
                         detail={"error": failure.what,
                                 "fallback": "answered again without the chat model"})
        return answer.model_copy(update={"trace": [*answer.trace, step], "best_effort": True})

    def _failed(self, failure: RagloomError, response: AskResponse | None,
                context: RequestContext) -> Outcome:
        """The 504 of a chat-model failure or an exceeded deadline."""
        context.record["error"] = str(failure)
        body = ErrorBody(detail=failure.what, where=failure.where, hint=failure.hint,
                         trace_id=context.trace_id, answer=response)
        return Outcome(504, response, body)

    def _response(self, answer: RagAnswer, plan: QueryPlan, calls: ModelCalls,
                  context: RequestContext) -> AskResponse:
        """The response of a finished run."""
        chunks = self.catalog.chunks(plan.collection, [c.chunk_id for c in answer.citations])
        citations = []
        for c in answer.citations:
            chunk = chunks.get(c.chunk_id)
            if chunk is not None and chunk.start <= c.start and c.end <= chunk.end:
                text = chunk.text[c.start - chunk.start:c.end - chunk.start]
            else:
                text = c.snippet
            meta = {k: v for k, v in c.metadata.items() if k not in RESERVED_META}
            citations.append(CitationOut(id=c.chunk_id, marker=c.marker, score=c.score,
                                         score_origin=c.score_origin, source_id=c.source_id,
                                         title=str(c.metadata.get("title", "")), meta=meta,
                                         text=text, start=c.start, end=c.end))
        metrics = Metrics(
            latency_ms=stage_latencies(answer.trace), total_ms=context.elapsed_ms(),
            model_calls=calls.calls, model_errors=calls.errors,
            tokens=Tokens(prompt=calls.prompt_tokens, completion=calls.completion_tokens,
                          estimated=calls.estimated),
            guardrail=_verdict(answer, "input_guard") or "ok",
            output_guard=_verdict(answer, "output_guard"), route=answer.route,
            best_effort=answer.best_effort)
        return AskResponse(answer=answer.text, citations=citations, trace_id=context.trace_id,
                           metrics=metrics, collection=plan.collection, profile=plan.profile,
                           trace=answer.trace)

    def _from_cache(self, cached: bytes, context: RequestContext) -> AskResponse:
        """A cached response under this request's trace id, marked as a hit."""
        response = AskResponse.model_validate_json(cached)
        metrics = response.metrics.model_copy(update={
            "cache_hit": True, "latency_ms": {}, "total_ms": context.elapsed_ms(),
            "model_calls": 0, "model_errors": 0, "tokens": Tokens()})
        return response.model_copy(update={"trace_id": context.trace_id, "metrics": metrics})

    def _record_fields(self, response: AskResponse) -> dict[str, Any]:
        """The log-line fields of a response (attributes of the request span too)."""
        metrics = response.metrics
        fields = {"graph_route": metrics.route, "guardrail": metrics.guardrail,
                  "output_guard": metrics.output_guard,
                  "retrieved": [c.id for c in response.citations],
                  "stages": metrics.latency_ms, "has_citations": bool(response.citations),
                  "best_effort": metrics.best_effort, "model_calls": metrics.model_calls}
        return fields

    # ---------------------------------------------------------------- other endpoints

    async def ingest(self, request: IngestRequest, principal: Principal,
                     context: RequestContext) -> IngestResponse:
        """Store documents in a collection the key may write (its business unit stamped on each)."""
        collection = request.collection
        context.record["collection"] = collection
        if not principal.can_read(collection):
            raise ServiceError(403, f"this key may not write collection {collection!r}",
                               where="collection",
                               known=sorted(principal.collections or []))
        folder = self.catalog.paths.data_dir / "uploads" / collection
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for doc in request.documents:
            bu = scoped_bu(doc.bu, principal)
            path = folder / f"{doc.id}.md"
            path.write_text(_front_matter(doc, bu), encoding="utf-8")
            paths.append(str(path))
        report = await asyncio.to_thread(runner.ingest, paths, collection=collection,
                                         settings=self.settings)
        self.catalog.names(refresh=True)
        return IngestResponse(
            collection=collection, ingested=report.count("ingested"),
            updated=report.count("updated"), unchanged=report.count("unchanged"),
            failed=report.count("failed") + report.count("quarantined"),
            chunks_written=report.chunks_written, embeddings_computed=report.embeddings_computed,
            errors=[e for s in report.sources for e in s.errors], trace_id=context.trace_id)

    def collections(self, principal: Principal) -> CollectionsResponse:
        """The collections the caller may read, with their sizes and revisions."""
        names = principal.readable(self.catalog.names(refresh=True))
        infos = [CollectionInfo(name=n, chunks=self.catalog.count(n),
                                revision=self.catalog.revision(n)) for n in names]
        default = self.settings.collection if self.settings.collection in names else None
        return CollectionsResponse(collections=infos, default=default)

    def source(self, collection: str, chunk_id: str, principal: Principal) -> SourceText:
        """A cited chunk in its document, as far as the caller's scope reaches."""
        name = self.catalog.require(collection, principal)
        scope = {BU: principal.bu} if principal.bu is not None else None
        return self.catalog.source_text(name, chunk_id, scope)

    def health(self) -> HealthResponse:
        """Liveness and wiring."""
        return HealthResponse(status="ok", version=__version__,
                              auth="keys" if self.keys.configured else "anonymous",
                              cache=self.cache.name,
                              chat=self.settings.chat.provider,
                              workers=self.settings.api.workers,
                              langsmith=langsmith_enabled())

    async def metrics_text(self) -> bytes:
        """The Prometheus exposition of the counters and latency windows."""
        return render(await self.stats.snapshot())
