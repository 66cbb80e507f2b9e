"""Request and response bodies of the HTTP service (the OpenAPI schema is generated from them)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from ragloom.profiles.presets import profile_names
from ragloom.state import TraceStep

MAX_QUERY_CHARS = 2000
COLLECTION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$"
Label = Annotated[str, StringConstraints(min_length=1, max_length=64,
                                         pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._:/-]*$")]
"""A metadata value a request filters on (business unit, document type)."""
if TYPE_CHECKING:
    ProfileName = str
else:
    ProfileName = Literal.__getitem__(tuple(profile_names()))
"""The registered profiles, as an enum in the OpenAPI schema."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryRequest(_Body):
    """What `/rag/retrieve` takes (and `/rag/ask`, which adds `stream`)."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the question")
    lang: str | None = Field(None, pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$",
                             description="language of the question and of the passages "
                             "(ISO 639-1, e.g. en, fr); filters on the chunks' `lang`")
    top_k: int | None = Field(None, ge=1, le=1000,
                              description="candidates each retrieval leg returns; omitted = "
                              "the profile's retrieval.candidate_k (100 for the hybrid profiles)")
    top_n: int | None = Field(None, ge=1, le=100, description="passages kept for the answer")
    bu: Label | None = Field(None, description="business unit: only chunks whose `bu` is this")
    type: list[Label] | None = Field(None, min_length=1, max_length=20,
                                     description="document types: chunks whose `type` is one")
    since: timedelta | datetime | None = Field(
        None, description="recency: an ISO-8601 duration (P30D = the last 30 days) or a "
        "date-time; chunks whose `last_modified` (epoch seconds) is older are left out")
    user_id: str | None = Field(None, max_length=200,
                                description="the end user, logged hashed only")
    collection: str | None = Field(None, pattern=COLLECTION_PATTERN,
                                   description="omitted = the server's default collection")
    profile: ProfileName | None = Field(None, description="omitted = the server's profile")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the query is blank")
        return value.strip()

    @field_validator("since")
    @classmethod
    def _positive_window(cls, value: timedelta | datetime | None) -> timedelta | datetime | None:
        if isinstance(value, timedelta) and value.total_seconds() <= 0:
            raise ValueError("a recency window must be positive")
        return value


class AskRequest(QueryRequest):
    """What `/rag/ask` takes."""

    stream: bool = Field(False, description="answer as Server-Sent Events: `stage` and `token` "
                         "events, then one `final` event with the whole response")


class CitationOut(BaseModel):
    """What one `[n]` marker of the answer resolves to."""

    id: str = Field(description="chunk id")
    marker: int
    score: float
    score_origin: str
    source_id: str
    title: str = ""
    meta: dict[str, Any] = Field(default_factory=dict)
    text: str = Field(description="the cited text: the chunk, or the sentences refined from it")
    start: int = Field(description="offset of the cited text in its document")
    end: int


class Tokens(BaseModel):
    """Tokens the chat model reported (estimated at 4 characters a token when it reported none)."""

    prompt: int = 0
    completion: int = 0
    estimated: bool = False


class Metrics(BaseModel):
    """How one answer was made."""

    latency_ms: dict[str, float] = Field(default_factory=dict,
                                         description="milliseconds per stage that ran")
    total_ms: float = 0.0
    model_calls: int = 0
    model_errors: int = 0
    tokens: Tokens = Field(default_factory=Tokens)
    cache_hit: bool = False
    guardrail: str = Field("ok", description="the input guard's category (ok when none ran)")
    output_guard: str | None = None
    route: str = ""
    best_effort: bool = False


class AskResponse(BaseModel):
    """An answer with its resolved citations, trace id and metrics."""

    answer: str
    citations: list[CitationOut] = Field(default_factory=list)
    trace_id: str
    metrics: Metrics
    collection: str
    profile: str
    trace: list[TraceStep] = Field(default_factory=list, description="every stage, in order")


class DocumentIn(_Body):
    """One document for `/rag/ingest`, stored with its metadata."""

    id: str = Field(min_length=1, max_length=120, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    text: str = Field(min_length=1, max_length=2_000_000)
    title: str | None = Field(None, max_length=300)
    lang: str | None = Field(None, pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")
    bu: Label | None = None
    type: Label | None = None
    last_modified: datetime | None = None


class IngestRequest(_Body):
    """Documents to add to (or replace in) a collection."""

    collection: str = Field(pattern=COLLECTION_PATTERN)
    documents: list[DocumentIn] = Field(min_length=1, max_length=500)


class IngestResponse(BaseModel):
    """What `/rag/ingest` did."""

    collection: str
    ingested: int
    updated: int
    unchanged: int
    failed: int
    chunks_written: int
    embeddings_computed: int
    errors: list[str] = Field(default_factory=list)
    trace_id: str


class CollectionInfo(BaseModel):
    """One collection the caller may read."""

    name: str
    chunks: int
    revision: str


class CollectionsResponse(BaseModel):
    """The collections the caller may read."""

    collections: list[CollectionInfo]
    default: str | None


class SourceText(BaseModel):
    """A cited chunk in its document (the text rebuilt from the chunks the caller may read)."""

    chunk_id: str
    doc_id: str
    source_id: str
    title: str = ""
    text: str
    start: int = Field(description="offset of the chunk in `text`")
    end: int


class HealthResponse(BaseModel):
    """Liveness and what the server is wired to."""

    status: str
    version: str
    auth: str = Field(description="keys | anonymous (loopback only)")
    cache: str
    chat: str
    workers: int
    langsmith: bool = Field(description="graph runs are traced to LangSmith (its environment "
                            "is set)")


class ErrorBody(BaseModel):
    """An error: what, where and what to do (`known` lists valid names for an unknown one)."""

    detail: str
    where: str | None = None
    hint: str | None = None
    known: list[str] | None = None
    trace_id: str | None = None
    answer: AskResponse | None = Field(None, description="504 only: the best-effort answer")
