"""The FastAPI application: routes, the request envelope (span, timing, log line, stats, body
limit) and the error bodies. `create_app(settings)` builds it; `app_from_env` is the factory
`ragloom serve` hands to uvicorn (each worker reads the same settings from the environment)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources as package_files
from typing import Annotated, Any

from ragloom.extras import require_extra

require_extra("api", "the HTTP service (ragloom serve)")  # before the imports it checks

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from opentelemetry import trace
from redis.exceptions import RedisError
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragloom import __version__
from ragloom.api.accesslog import configure_access_log, log_request, pseudonym
from ragloom.api.errors import ServiceError
from ragloom.api.keys import Principal
from ragloom.api.models import (
    COLLECTION_PATTERN,
    AskRequest,
    AskResponse,
    CollectionsResponse,
    ErrorBody,
    HealthResponse,
    IngestRequest,
    IngestResponse,
    QueryRequest,
    SourceText,
)
from ragloom.api.service import Outcome, Prepared, RagService, RequestContext
from ragloom.api.telemetry import now_ns
from ragloom.errors import RagloomError, StoreError, UnknownNameError
from ragloom.settings import RagSettings, load_settings

ROUTES = frozenset({"/", "/rag/ask", "/rag/retrieve", "/rag/ingest", "/rag/source",
                    "/collections", "/health", "/metrics", "/graphql", "/openapi.json"})
"""Paths counted under their own name in the stats; anything else counts as `other`."""
ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text} for status, text in (
        (401, "missing or unknown API key"), (403, "outside the key's scope"),
        (404, "unknown collection (the known ones are listed)"),
        (429, "rate limit exceeded (see Retry-After)"),
        (504, "chat model failure or deadline: the best-effort answer, when there is one"))}

bearer = HTTPBearer(auto_error=False, description="an API key made by `ragloom api-key` "
                    "(or send it as `X-API-Key: <key>`)")


def _context(request: Request) -> RequestContext:
    return request.scope["state"]["ragloom"]


def _service(request: Request) -> RagService:
    return request.app.state.service


async def _principal(request: Request, scope: str,
                     credentials: HTTPAuthorizationCredentials | None) -> Principal:
    secret = (credentials.credentials if credentials is not None
              else request.headers.get("x-api-key"))
    client = request.client.host if request.client else "unknown"
    return await _service(request).authorize(secret, client, scope=scope,
                                             context=_context(request))


async def reader(request: Request,
                 credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
                 ) -> Principal:
    """The principal of a read request (401 / 429 otherwise)."""
    return await _principal(request, "read", credentials)


async def writer(request: Request,
                 credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
                 ) -> Principal:
    """The principal of an ingest request (403 without the ingest scope)."""
    return await _principal(request, "ingest", credentials)


Reader = Annotated[Principal, Depends(reader)]


class RequestEnvelope:
    """Per request: the server span, the body limit, the Server-Timing and trace headers, and
    afterwards one log line and the stats (what the handlers added to the record included)."""

    def __init__(self, app: ASGIApp, service: RagService) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Count the request and time it; non-HTTP scopes pass straight through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        route = path if path in ROUTES or path.startswith("/static/") else "other"
        start_ns = now_ns()
        span = self.service.tracer.start_span(f"{scope['method']} {route}",
                                              kind=trace.SpanKind.SERVER, start_time=start_ns)
        context = RequestContext(span=span, start_ns=start_ns, started=time.perf_counter())
        client = scope.get("client") or ("unknown", 0)
        context.record.update(route=route, method=scope["method"], pid=os.getpid(),
                              client=pseudonym(client[0], self.service.salt))
        scope.setdefault("state", {})["ragloom"] = context
        status = [500]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-trace-id", context.trace_id.encode()))
                headers.append((b"server-timing",
                                f"app;dur={context.elapsed_ms():.3f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            if self._too_large(scope):
                await self._reject_body(scope, send_with_headers)
            else:
                await self.app(scope, receive, send_with_headers)
        finally:
            self._finish(context, route, status[0])
        await self.service.stats.record(route, status[0], context.record.get("stages") or {},
                                        context.elapsed_ms(), context.record.get("cache"))

    def _too_large(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    return int(value) > self.service.settings.api.max_body_bytes
                except ValueError:
                    return True
        return False

    async def _reject_body(self, scope: Scope, send: Send) -> None:
        limit = self.service.settings.api.max_body_bytes
        body = json.dumps({"detail": [{"loc": ["body"], "type": "too_large",
                                       "msg": f"the body is over the limit of {limit} bytes"}]})
        response = Response(body, status_code=422, media_type="application/json")
        await response(scope, _empty_receive, send)

    def _finish(self, context: RequestContext, route: str, status: int) -> None:
        record = context.record
        span = context.span
        span.set_attribute("http.route", route)
        span.set_attribute("http.response.status_code", status)
        for name in ("collection", "profile", "cache", "guardrail", "graph_route",
                     "has_citations", "best_effort", "model_calls"):
            if record.get(name) is not None:
                span.set_attribute(f"rag.{name}", record[name])
        span.end()
        log_request({"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "trace_id": context.trace_id, "status": status,
                     "total_ms": context.elapsed_ms(), **record})


async def _empty_receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _error_response(status: int, body: ErrorBody,
                    headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body.model_dump(mode="json", exclude_none=True), status_code=status,
                        headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        _context(request).record["error"] = str(exc)
        body = ErrorBody(detail=exc.what, where=exc.where, hint=exc.hint, known=exc.known,
                         trace_id=_context(request).trace_id)
        return _error_response(exc.status, body, exc.headers)

    @app.exception_handler(UnknownNameError)
    async def unknown_name(request: Request, exc: UnknownNameError) -> JSONResponse:
        _context(request).record["error"] = str(exc)
        return _error_response(422, ErrorBody(detail=exc.what, where=exc.kind, hint=exc.hint,
                                              known=sorted(exc.known),
                                              trace_id=_context(request).trace_id))

    @app.exception_handler(RagloomError)
    async def ragloom_error(request: Request, exc: RagloomError) -> JSONResponse:
        _context(request).record["error"] = str(exc)
        status = 503 if isinstance(exc, StoreError) else 422
        return _error_response(status, ErrorBody(detail=exc.what, where=exc.where,
                                                 hint=exc.hint,
                                                 trace_id=_context(request).trace_id))

    @app.exception_handler(RedisError)
    async def redis_down(request: Request, exc: RedisError) -> JSONResponse:
        _context(request).record["error"] = f"redis: {type(exc).__name__}"
        return _error_response(503, ErrorBody(
            detail="the shared store (Redis) does not answer", where="api.redis_url",
            hint="restart redis-server or check api.redis_url",
            trace_id=_context(request).trace_id))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # a body FastAPI could not even decode
            errors = [{"loc": ["body"], "msg": f"the body cannot be read: {exc.detail}",
                       "type": "json_invalid"}]
            _context(request).record["error"] = "body: json_invalid"
            return JSONResponse({"detail": errors}, status_code=422)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                            headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                  for e in exc.errors()]
        _context(request).record["error"] = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['type']}" for e in errors)
        return JSONResponse({"detail": errors}, status_code=422)


def _outcome_response(outcome: Outcome) -> JSONResponse:
    if outcome.error is not None:
        return _error_response(outcome.status, outcome.error)
    assert outcome.response is not None
    return JSONResponse(outcome.response.model_dump(mode="json"))


async def _sse(service: RagService, prepared: Prepared,
               context: RequestContext) -> AsyncIterator[ServerSentEvent]:
    """The events of a streamed answer: `stage`, `token`, then `final` (or `error`: a 504, or a
    failure after the stream began, with its status)."""
    try:
        async for event in _run_events(service, prepared, context):
            yield event
    except RagloomError as exc:
        context.record["error"] = str(exc)
        status = exc.status if isinstance(exc, ServiceError) else 503
        body = ErrorBody(detail=exc.what, where=exc.where, hint=exc.hint,
                         trace_id=context.trace_id).model_dump(exclude_none=True)
        yield ServerSentEvent(data=json.dumps({**body, "status": status}), event="error")


async def _run_events(service: RagService, prepared: Prepared,
                      context: RequestContext) -> AsyncIterator[ServerSentEvent]:
    async for item in service.run(prepared, context):
        if isinstance(item, Outcome):
            if item.error is not None:
                data = {**item.error.model_dump(mode="json", exclude_none=True),
                        "status": item.status}
                yield ServerSentEvent(data=json.dumps(data), event="error")
            else:
                assert item.response is not None
                yield ServerSentEvent(data=item.response.model_dump_json(), event="final")
        elif item.kind == "stage":
            yield ServerSentEvent(data=json.dumps({"stage": item.stage}), event="stage")
        elif item.text:
            yield ServerSentEvent(data=json.dumps({"text": item.text}), event="token")


def create_app(settings: RagSettings | None = None, *, span_exporter: Any = None) -> FastAPI:
    """The service over a data directory (settings from the environment when not given)."""
    settings = settings or load_settings()
    service = RagService(settings, span_exporter=span_exporter)
    configure_access_log()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(service.warm)
        # Models and indexes are half a million long-lived objects: a full collection over them
        # took ~300 ms (SciFact loaded), the tail of every latency percentile. Frozen, the
        # collector leaves them alone and scans only what requests allocate.
        gc.collect()
        gc.freeze()
        yield
        await service.close()

    app = FastAPI(title="ragloom", version=__version__, lifespan=lifespan,
                  description="Retrieval-augmented answers with citations over HTTP.",
                  docs_url=None, redoc_url=None)  # their pages load scripts from a CDN
    app.state.service = service
    _install_error_handlers(app)
    app.add_middleware(RequestEnvelope, service=service)

    @app.post("/rag/ask", response_model=AskResponse, responses={
        **ERRORS, 200: {"content": {"text/event-stream": {}},
                        "description": "the answer (JSON, or SSE when stream is true)"}})
    async def ask(body: AskRequest, request: Request, principal: Reader) -> Response:
        """Answer a question with `[n]` citations (Server-Sent Events when `stream` is true)."""
        context = _context(request)
        prepared = service.prepare(body, principal, retrieval_only=False)
        if body.stream:
            return EventSourceResponse(_sse(service, prepared, context), ping=15)
        return _outcome_response(await service.answer(prepared, context))

    @app.post("/rag/retrieve", response_model=AskResponse, responses=ERRORS)
    async def retrieve(body: QueryRequest, request: Request, principal: Reader) -> Response:
        """Retrieval only: the ranked passages as citations, no generated text."""
        prepared = service.prepare(body, principal, retrieval_only=True)
        return _outcome_response(await service.answer(prepared, _context(request)))

    @app.post("/rag/ingest", response_model=IngestResponse, responses=ERRORS)
    async def ingest(body: IngestRequest, request: Request,
                     principal: Annotated[Principal, Depends(writer)]) -> IngestResponse:
        """Add or replace documents (keys with the `ingest` scope only)."""
        return await service.ingest(body, principal, _context(request))

    @app.get("/collections", response_model=CollectionsResponse, responses=ERRORS)
    async def collections(principal: Reader) -> CollectionsResponse:
        """The collections this key may read."""
        return service.collections(principal)

    @app.get("/rag/source", response_model=SourceText, responses=ERRORS)
    async def source(principal: Reader,
                     collection: Annotated[str, Query(pattern=COLLECTION_PATTERN)],
                     chunk_id: Annotated[str, Query(min_length=1, max_length=2000)]
                     ) -> SourceText:
        """A cited chunk in its document's text (only what this key may read)."""
        return service.source(collection, chunk_id, principal)

    @app.get("/health", response_model=HealthResponse)
    async def health() -> HealthResponse:
        """Liveness and wiring (no key needed)."""
        return service.health()

    @app.get("/metrics", response_class=Response,
             responses={200: {"content": {"text/plain": {}}}})
    async def metrics() -> Response:
        """Prometheus text: requests, cache hits, p50/p95/p99 per stage and route."""
        return Response(await service.metrics_text(),
                        media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def chat_page() -> HTMLResponse:
        """The chat page."""
        return HTMLResponse(package_files.files("ragloom.api").joinpath(
            "static/index.html").read_text(encoding="utf-8"))

    from ragloom.api.graphql import graphql_router

    app.include_router(graphql_router(service, reader), prefix="/graphql",
                       include_in_schema=False)
    app.mount("/static", StaticFiles(packages=[("ragloom.api", "static")]), name="static")
    return app


def app_from_env() -> FastAPI:
    """The uvicorn factory of `ragloom serve`: settings from RAGLOOM_* and RAGLOOM_CONFIG."""
    return create_app(load_settings())

