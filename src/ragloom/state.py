"""Contracts shared by every stage: chunks, citations, trace steps, answers and graph state."""

from __future__ import annotations

import hashlib
import operator
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from langgraph.managed import RemainingSteps
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from typing_extensions import Required, TypedDict

from ragloom.errors import QueryError

MAX_ITERATIONS = 10
"""The largest loop budget a setting or a run's input may ask for."""

ScoreOrigin = str  # "vector" | "bm25" | "rrf" | "convex" | "rerank:<name>" | "web"


def content_hash(text: str | bytes) -> str:
    """Return the sha256 hex digest of text (utf-8) or bytes."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


class SourceDocument(BaseModel):
    """One document produced by a loader: a file, a CSV row, a JSONL line or a web page."""

    doc_id: str
    source_id: str
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Hash of the document text, used to detect changed documents."""
        return content_hash(self.text)


class Chunk(BaseModel):
    """A span of a source document with exact character offsets into the document text."""

    id: str
    source_id: str
    doc_id: str
    text: str
    start: int
    end: int
    metadata: dict[str, Any] = Field(default_factory=dict)

    @staticmethod
    def make_id(doc_id: str, ordinal: int, text: str) -> str:
        """Stable chunk id: document id + ordinal + short content hash."""
        return f"{doc_id}::{ordinal}::{content_hash(text)[:12]}"


class ScoredChunk(BaseModel):
    """A chunk with the score of the stage that ranked it."""

    chunk: Chunk
    score: float
    score_origin: ScoreOrigin


class Citation(BaseModel):
    """What an answer's `[n]` marker resolves to."""

    marker: int
    chunk_id: str
    source_id: str
    snippet: str
    score: float
    score_origin: ScoreOrigin
    start: int
    end: int
    metadata: dict[str, Any] = Field(default_factory=dict)


class TraceStep(BaseModel):
    """One stage's record: how long it took and what it decided."""

    stage: str
    duration_ms: float
    detail: dict[str, Any] = Field(default_factory=dict)


class Verdict(BaseModel):
    """A grader's decision, routed on by conditional edges."""

    stage: str
    verdict: str
    score: float | None = None
    reason: str = ""


class RagAnswer(BaseModel):
    """The answer to a question: text with `[n]` markers, resolved citations and the trace."""

    question: str
    text: str
    citations: list[Citation] = Field(default_factory=list)
    trace: list[TraceStep] = Field(default_factory=list)
    profile: str = ""
    route: str = ""
    verdicts: list[Verdict] = Field(default_factory=list)
    iterations: int = 0
    query_variants: list[str] = Field(default_factory=list)
    best_effort: bool = False


SourceStatus = Literal["ingested", "updated", "unchanged", "removed", "quarantined", "failed"]


class SourceResult(BaseModel):
    """What ingestion did with one source."""

    source_id: str
    status: SourceStatus
    documents: int = 0
    chunks: int = 0
    embeddings_computed: int = 0
    errors: list[str] = Field(default_factory=list)
    signals: list[str] = Field(default_factory=list)
    suspicious_documents: int = 0
    quarantined_documents: int = 0
    old_version: Literal["removed"] | None = Field(
        None,
        description="what happened to the version stored before, when the source failed or was "
        "quarantined this time: 'removed' (policy: a source that no longer loads is not served)",
    )


class IngestionReport(BaseModel):
    """The outcome of one ingestion run: per source, totals, and duration per stage."""

    collection: str
    sources: list[SourceResult] = Field(
        default_factory=list,
        description="every source the run read, wrote, removed or failed on (sources settled "
        "unchanged from their stat alone are listed in `unchanged` instead)",
    )
    unchanged: list[str] = Field(
        default_factory=list,
        description="sources whose size and mtime matched the manifest: settled without being "
        "opened, at no cost (a source read again and found identical is in `sources`)",
    )
    stage_ms: dict[str, float] = Field(default_factory=dict)
    total_ms: float = 0.0
    reindexed: bool = False
    warnings: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(
        default_factory=dict,
        description="files a directory walk or glob passed over, with the reason (unsupported "
        "type, symbolic link not followed, same file reached twice)",
    )

    def count(self, status: SourceStatus) -> int:
        """Number of sources that ended with the given status."""
        settled = len(self.unchanged) if status == "unchanged" else 0
        return settled + sum(1 for s in self.sources if s.status == status)

    def statuses(self) -> dict[str, SourceStatus]:
        """Every source of the run (those in `unchanged` included) → its status."""
        settled: dict[str, SourceStatus] = dict.fromkeys(self.unchanged, "unchanged")
        return {**settled, **{s.source_id: s.status for s in self.sources}}

    @property
    def chunks_written(self) -> int:
        """Chunks stored by this run."""
        return sum(s.chunks for s in self.sources if s.status in ("ingested", "updated"))

    @property
    def embeddings_computed(self) -> int:
        """Embeddings computed by this run (zero for an unchanged re-ingest)."""
        return sum(s.embeddings_computed for s in self.sources)

    @property
    def failed(self) -> list[SourceResult]:
        """Sources that could not be ingested."""
        return [s for s in self.sources if s.status == "failed"]

    @property
    def quarantined(self) -> list[SourceResult]:
        """Sources rejected by a validator and kept in quarantine."""
        return [s for s in self.sources if s.status == "quarantined"]


class Hop(BaseModel):
    """What one retrieval hop of a multi-hop question found: its probe and ranked passages."""

    index: int
    wave: int = 1
    probe: str
    source: str | None = None
    """Chunk id of the earlier hop's passage a bridge probe was built from."""
    passages: list[ScoredChunk] = Field(default_factory=list)


class Round(BaseModel):
    """The best-graded retrieval round of a corrective run: its probe, grade and passages."""

    iteration: int
    probe: str
    verdict: str
    score: float
    passages: list[ScoredChunk] = Field(default_factory=list)
    relevance: dict[str, float] = Field(default_factory=dict)


@dataclass
class RagContext:
    """Runtime context of the query graphs (`context=` of invoke, or the served run's context).

    `collection` selects the collection a run reads; None means the one the graph was built for.
    Everything else a run may vary (filters, top_n, the loop budget) travels in the input.
    """

    collection: str | None = None


class RunInput(BaseModel):
    """One run's input, the same on every surface: the question and the per-run knobs.

    `lang` is the request's language (ISO 639-1 or a BCP 47 tag, kept as its primary subtag;
    None: detected from the question). `ranking` overrides the `ranking` settings for this run;
    `max_iterations` the loop budget; `thread` names the conversation thread the run belongs to
    (LangGraph's `thread_id`). `checked` validates one, with errors that name the knob.
    """

    model_config = ConfigDict(extra="forbid")

    question: str
    filters: dict[str, Any] | None = None
    top_n: int | None = None
    max_iterations: int | None = None
    lang: str | None = None
    ranking: dict[str, Any] | None = None
    thread: str | None = None

    @field_validator("top_n", "max_iterations", mode="before")
    @classmethod
    def _whole_number(cls, value: Any, info: ValidationInfo) -> Any:
        low, high = KNOB_RANGES[str(info.field_name)]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value <= high):
            raise ValueError(f"{info.field_name} must be an integer from {low} to {high}, "
                             f"got {value!r}")
        return value

    @field_validator("lang", mode="before")
    @classmethod
    def _language(cls, value: Any) -> Any:
        if value is None:
            return None
        code = value.strip().replace("_", "-").split("-")[0].lower() \
            if isinstance(value, str) else ""
        if not (code.isalpha() and 2 <= len(code) <= 3):
            raise ValueError(f"lang must be a language code such as 'en' or 'fr-CA', "
                             f"got {value!r}")
        return code

    @classmethod
    def checked(cls, values: dict[str, Any]) -> RunInput:
        """The typed input of these values, or a QueryError naming the malformed knob."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            error = first.get("ctx", {}).get("error")
            raise QueryError(str(error) if error is not None else f"{field}: {first['msg']}",
                             where=f"input.{field}",
                             hint=KNOB_HINTS.get(field, "fix it or leave it out")) from exc

    def graph_input(self) -> dict[str, Any]:
        """The input mapping of the query graphs (RagInput)."""
        return self.model_dump(exclude={"thread"})


def run_knobs(state: Mapping[str, Any], *, budget: bool = False) -> dict[str, Any]:
    """The question and per-run knobs of a run's state, as an inner graph's input takes them
    (`budget`: with the loop budget, for a whole profile graph)."""
    left_out = {"thread"} if budget else {"thread", "max_iterations"}
    return {name: state.get(name) for name in RunInput.model_fields if name not in left_out}


KNOB_RANGES = {"top_n": (1, 1000), "max_iterations": (0, MAX_ITERATIONS)}
"""Bounds of the whole-number knobs of a run."""
KNOB_HINTS = {"top_n": "omit it to use rerank.top_n",
              "max_iterations": "omit it to use loop.max_iterations",
              "lang": "omit it to detect the question's language"}
"""What to do about a malformed knob."""


class RagInput(TypedDict, total=False):
    """Input schema of the query graphs: the question and the per-run knobs.

    `lang` is the request's language (ISO 639-1; None: detected from the question): refusals are
    written in it and the ranking stage may down-rank passages in other languages. `ranking`
    overrides the `ranking` settings for this run (`source_cap`, `cap_by`, `recency_weight`,
    `recency_half_life_days`, `lang_penalty`); turning a knob on needs a graph built with the
    ranking stage (`ranking.per_request` or a knob on in the settings).
    """

    question: Required[str]
    filters: dict[str, Any] | None
    top_n: int | None
    max_iterations: int | None
    lang: str | None
    ranking: dict[str, Any] | None


class RagOutput(TypedDict, total=False):
    """Output schema of the query graphs."""

    answer: RagAnswer


class RagState(TypedDict, total=False):
    """Working state of the query graphs.

    Keys that several nodes or parallel branches write carry a reducer: candidate lists (one per
    probe and leg), the passages gathered by parallel hops, the probes tried, verdicts, the trace and
    the best-effort flag. The others have one writer per superstep.

    The retrieval stages pass one ranking along: `ranked`, which retrieve sets to the first probe's
    candidates and fuse, rerank and ranking each replace (fuse reads every probe's `candidates`);
    `reserve` holds what a reranker passed over, for the ranking stage to refill from.
    """

    question: str
    probe: str | None
    filters: dict[str, Any] | None
    top_n: int | None
    max_iterations: int | None
    lang: str | None
    ranking: dict[str, Any] | None
    probes: list[str]
    query_variants: Annotated[list[str], operator.add]
    candidates: Annotated[list[list[ScoredChunk]], operator.add]
    ranked: list[ScoredChunk]
    reserve: list[ScoredChunk]
    passages: list[ScoredChunk]
    relevance: dict[str, float]
    missing_terms: list[str]
    best_round: Round | None
    hops: Annotated[list[Hop], operator.add]
    bridge_plan: list[Hop]
    hop: int
    wave: int
    source: str | None
    draft: str
    citations: list[Citation]
    refused: str
    answer: RagAnswer
    iterations: int
    best_effort: Annotated[bool, operator.or_]
    route: str
    trace: Annotated[list[TraceStep], operator.add]
    verdicts: Annotated[list[Verdict], operator.add]
    remaining_steps: RemainingSteps


class RetrievalInput(TypedDict, total=False):
    """Input of the retrieval subgraph: what to retrieve for (`probe`, else `question`)."""

    question: Required[str]
    probe: str | None
    filters: dict[str, Any] | None
    top_n: int | None
    lang: str | None
    ranking: dict[str, Any] | None


class RetrievalOutput(TypedDict, total=False):
    """Output of the retrieval subgraph: the ranked, assembled passages and the stage trace."""

    passages: list[ScoredChunk]
    query_variants: list[str]
    trace: list[TraceStep]
