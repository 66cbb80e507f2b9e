"""GraphQL at `/graphql` (strawberry): `ragAsk(query, lang, top_k, bu, type, ...)` over the same
code path as `POST /rag/ask`: the same key check, rate limit, scope filters, cache and engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import strawberry
from fastapi import Depends, Request
from graphql import GraphQLError
from pydantic import ValidationError
from strawberry.fastapi import GraphQLRouter
from strawberry.scalars import JSON
from strawberry.schema.config import StrawberryConfig
from strawberry.types import Info

from ragloom.api.errors import ServiceError
from ragloom.api.keys import Principal
from ragloom.api.models import AskResponse, QueryRequest
from ragloom.api.service import RagService, RequestContext
from ragloom.errors import RagloomError, UnknownNameError


@strawberry.type
class Citation:
    """What one `[n]` marker resolves to."""

    id: str
    marker: int
    score: float
    score_origin: str
    source_id: str
    title: str
    meta: JSON
    text: str
    start: int
    end: int


@strawberry.type
class Tokens:
    """Tokens the chat model used."""

    prompt: int
    completion: int
    estimated: bool


@strawberry.type
class Metrics:
    """How the answer was made."""

    latency_ms: JSON
    total_ms: float
    model_calls: int
    model_errors: int
    tokens: Tokens
    cache_hit: bool
    guardrail: str
    output_guard: str | None
    route: str
    best_effort: bool


@strawberry.type
class Answer:
    """An answer with its citations, trace id and metrics."""

    answer: str
    citations: list[Citation]
    trace_id: str
    metrics: Metrics
    collection: str
    profile: str
    status: int


def _answer(response: AskResponse, status: int) -> Answer:
    data = response.model_dump(mode="json", exclude={"trace"})
    metrics = data["metrics"]
    return Answer(
        answer=data["answer"], trace_id=data["trace_id"], collection=data["collection"],
        profile=data["profile"], status=status,
        citations=[Citation(**c) for c in data["citations"]],
        metrics=Metrics(**{**metrics, "tokens": Tokens(**metrics["tokens"])}))


def _graphql_error(exc: RagloomError) -> GraphQLError:
    status = exc.status if isinstance(exc, ServiceError) else 422
    known = exc.known if isinstance(exc, ServiceError | UnknownNameError) else None
    return GraphQLError(str(exc), extensions={"status": status, "where": exc.where,
                                              "hint": exc.hint, "known": known})


def _schema() -> strawberry.Schema:
    @strawberry.type
    class Query:
        @strawberry.field(name="ragAsk", description="Answer a question with [n] citations.")
        async def rag_ask(self, info: Info, query: str, lang: str | None = None,
                          top_k: int | None = None, bu: str | None = None,
                          type: list[str] | None = None, top_n: int | None = None,
                          collection: str | None = None, profile: str | None = None,
                          user_id: str | None = None) -> Answer:
            service: RagService = info.context["service"]
            context: RequestContext = info.context["request_context"]
            principal: Principal = info.context["principal"]
            try:
                request = QueryRequest(query=query, lang=lang, top_k=top_k, bu=bu, type=type,
                                       top_n=top_n, collection=collection, profile=profile,
                                       user_id=user_id)
            except ValidationError as exc:
                errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
                raise GraphQLError("invalid arguments",
                                   extensions={"status": 422, "errors": errors}) from exc
            try:
                prepared = service.prepare(request, principal, retrieval_only=False)
                outcome = await service.answer(prepared, context)
            except RagloomError as exc:
                context.record["error"] = str(exc)
                raise _graphql_error(exc) from exc
            if outcome.response is None:
                assert outcome.error is not None
                raise GraphQLError(outcome.error.detail,
                                   extensions={"status": outcome.status})
            return _answer(outcome.response, outcome.status)

    return strawberry.Schema(query=Query, config=StrawberryConfig(auto_camel_case=False))


def graphql_router(service: RagService,
                   reader: Callable[..., Any]) -> GraphQLRouter[Any, None]:
    """The `/graphql` router: POST only, the caller's principal in the context."""

    # a default, not Annotated: postponed annotations cannot see this closure's `reader`
    async def context(request: Request,
                      principal: Principal = Depends(reader)) -> dict[str, Any]:  # noqa: B008
        return {"service": service, "principal": principal,
                "request_context": request.scope["state"]["ragloom"]}

    return GraphQLRouter(_schema(), context_getter=context, graphql_ide=None,
                         allow_queries_via_get=False)
