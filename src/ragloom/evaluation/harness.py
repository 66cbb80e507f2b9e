"""The evaluation harness: ingest a dataset, run every profile through the public runner, score it.

Per profile and case, three calls of `ragloom.runner` (nothing of the pipeline is re-implemented):

1. `retrieve(question, top_n=depth)` with the assemble budget lifted, for the retrieval metrics:
   chunks map back to judged documents (`EvalDataset.doc_key`), a document ranking by its best
   chunk, scored by trec_eval (recall@k, MRR@10, nDCG@10).
2. `retrieve(question)` with the profile's own settings: the passages the generator is given, the
   contexts of the context-precision/recall and faithfulness metrics (full chunk texts).
3. `ask(question)` with the profile's own settings: the answer, its citations and latency.

Model calls and token usage are counted by a LangChain callback handler registered as a configure
hook, so every chat-model call inside the graphs is seen whichever node makes it; the judge's own
calls are counted apart. Time spent inside `ragloom.runner` calls is clocked separately from the
whole run so the harness's own overhead can be reported.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook
from pydantic import BaseModel, Field

from ragloom import resources
from ragloom.errors import ConfigError
from ragloom.evaluation.datasets import CORRECTIVE, EvalCase, EvalDataset
from ragloom.evaluation.judge import Judge, JudgeInput, make_judge
from ragloom.evaluation.metrics import (
    exact_match,
    is_refusal,
    mean,
    percentile,
    ranked_documents,
    retrieval_metric_names,
    retrieval_metrics,
    substring_hits,
    token_f1,
)
from ragloom.settings import RagSettings

ProgressFn = Callable[[str, int, int], None]
"""progress(label, done, total): label is `ingest` or a profile name."""

UNLIMITED_BUDGET = 10**7
MAX_DEPTH = 100
ANSWER_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall",
                  "citation_validity")


# ----------------------------------------------------------------- model usage meter


class UsageMeter(BaseCallbackHandler):
    """Counts chat/LLM calls and the token usage the provider reports."""

    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_custom_event = True
    run_inline = True

    def __init__(self) -> None:
        self.calls = 0
        self.reported = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        """Count a chat model call."""
        with self._lock:
            self.calls += 1

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        """Count a completion model call."""
        with self._lock:
            self.calls += 1

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Add the token usage a call reports."""
        usage = _usage(response)
        if usage is None:
            return
        with self._lock:
            self.reported += 1
            self.prompt_tokens += usage[0]
            self.completion_tokens += usage[1]

    def snapshot(self) -> tuple[int, int, int, int]:
        """(calls, calls with usage, prompt tokens, completion tokens)."""
        with self._lock:
            return self.calls, self.reported, self.prompt_tokens, self.completion_tokens


def _usage(response: LLMResult) -> tuple[int, int] | None:
    """(prompt, completion) tokens of one model call, from the message or the llm_output."""
    for generations in response.generations:
        for generation in generations:
            meta = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if meta:
                return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    token_usage = (response.llm_output or {}).get("token_usage") or {}
    if token_usage:
        return int(token_usage.get("prompt_tokens", 0)), int(token_usage.get("completion_tokens", 0))
    return None


_meter: ContextVar[UsageMeter | None] = ContextVar("ragloom_eval_usage_meter", default=None)
register_configure_hook(_meter, inheritable=True)


@contextlib.contextmanager
def metered(meter: UsageMeter) -> Iterator[UsageMeter]:
    """Count every model call made (by any runnable) inside the block."""
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


# ----------------------------------------------------------------- results


class CaseResult(BaseModel):
    """One case under one profile."""

    id: str
    tags: list[str] = Field(default_factory=list)
    question: str
    answerable: bool = True
    relevant: list[str] = Field(default_factory=list)
    ranking: list[str] = Field(default_factory=list, description="top documents, best first")
    retrieval: dict[str, float] = Field(default_factory=dict)
    answer: str | None = None
    refused: bool | None = None
    expected_hits: int | None = None
    expected_total: int | None = None
    exact_match: float | None = None
    token_f1: float | None = None
    judged: dict[str, float | None] = Field(default_factory=dict)
    markers: int = 0
    unresolved_markers: int = 0
    unsupported_markers: int = 0
    uncited_claims: int = 0
    best_effort: bool = False
    retrieve_ms: float = 0.0
    ask_ms: float | None = None
    model_calls: int = 0

    @property
    def expected_hit(self) -> float | None:
        """1.0 when every expected substring is in the answer; None without expectations."""
        if not self.expected_total or self.answer is None:
            return None
        return float(self.expected_hits == self.expected_total)


class Cost(BaseModel):
    """Model calls and tokens of one profile's pipeline runs (the judge's counted apart)."""

    model_calls: int = 0
    calls_with_usage: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    judge_calls: int = 0
    judge_fallbacks: int = 0


class ProfileResult(BaseModel):
    """Everything measured for one profile."""

    profile: str
    settings: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, float | None] = Field(default_factory=dict)
    gate: dict[str, float | None] = Field(default_factory=dict,
                                          description="metrics without the corrective cases")
    corrective: dict[str, float | None] = Field(default_factory=dict)
    by_tag: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    latency_ms: dict[str, float | None] = Field(default_factory=dict)
    cost: Cost = Field(default_factory=Cost)
    cases: list[CaseResult] = Field(default_factory=list)


class Timing(BaseModel):
    """Where the time went: inside ragloom.runner calls versus the harness itself."""

    total_s: float = 0.0
    runner_s: float = 0.0
    ingest_s: float = 0.0
    retrieve_s: float = 0.0
    ask_s: float = 0.0
    judge_s: float = 0.0
    metrics_s: float = 0.0
    report_s: float = 0.0

    @property
    def overhead_s(self) -> float:
        """Seconds of the run spent outside ragloom.runner calls."""
        return max(0.0, self.total_s - self.runner_s)

    @property
    def overhead_pct(self) -> float:
        """The harness's own share of the run, in percent."""
        return 100.0 * self.overhead_s / self.total_s if self.total_s else 0.0


class EvalReport(BaseModel):
    """A whole evaluation: dataset, options, judge, per-profile results and timing."""

    dataset: str
    dataset_path: str
    dataset_kind: str
    split: str | None = None
    collection: str
    data_dir: str
    cases: int
    k: int
    depth: int
    answers: bool
    judge: str
    profiles: list[ProfileResult]
    ingest: dict[str, Any] = Field(default_factory=dict)
    timing: Timing = Field(default_factory=Timing)
    started: str = ""
    load_average: dict[str, list[float]] = Field(
        default_factory=dict, description="1/5/15-minute load at the start and the end (shared machines)")

    def profile(self, name: str) -> ProfileResult:
        """The result of one profile, or a ConfigError naming the evaluated ones."""
        for result in self.profiles:
            if result.profile == name:
                return result
        raise ConfigError(f"profile {name!r} was not evaluated",
                          hint=f"evaluated: {', '.join(p.profile for p in self.profiles)}")


# ----------------------------------------------------------------- aggregation


def aggregate(cases: Sequence[CaseResult], k: int) -> dict[str, float | None]:
    """Mean of each metric over the cases it applies to, plus case counts."""
    names = retrieval_metric_names(k)
    scored = [c for c in cases if c.retrieval]
    answered = [c for c in cases if c.answer is not None]
    answerable = [c for c in answered if c.answerable]
    unanswerable = [c for c in answered if not c.answerable]
    out: dict[str, float | None] = {name: mean(c.retrieval.get(name) for c in scored)
                                    for name in names}
    out["expected_hit_rate"] = mean(c.expected_hit for c in answerable)
    out["exact_match"] = mean(c.exact_match for c in answerable)
    out["token_f1"] = mean(c.token_f1 for c in answerable)
    out["refusal_correct"] = mean(float(bool(c.refused)) for c in unanswerable)
    out["false_refusal"] = mean(float(bool(c.refused)) for c in answerable)
    for name in ANSWER_METRICS:
        pool = answerable if name == "answer_relevancy" else answered
        out[name] = mean(c.judged.get(name) for c in pool)
    out["cases"] = float(len(cases))
    out["retrieval_cases"] = float(len(scored))
    return out


def latency(cases: Sequence[CaseResult]) -> dict[str, float | None]:
    """p50 and p95 of the ask and (deep) retrieve latencies, in milliseconds."""
    asks = [c.ask_ms for c in cases if c.ask_ms is not None]
    retrieves = [c.retrieve_ms for c in cases]
    return {
        "ask_p50": percentile(asks, 50), "ask_p95": percentile(asks, 95),
        "retrieve_p50": percentile(retrieves, 50), "retrieve_p95": percentile(retrieves, 95),
    }


def summarize(result: ProfileResult, k: int) -> None:
    """Fill a profile's aggregates (all, gate, corrective, per tag) and latency from its cases."""
    cases = result.cases
    result.metrics = aggregate(cases, k)
    result.gate = aggregate([c for c in cases if CORRECTIVE not in c.tags], k)
    corrective = [c for c in cases if CORRECTIVE in c.tags]
    result.corrective = aggregate(corrective, k) if corrective else {}
    tags = sorted({t for c in cases for t in c.tags})
    result.by_tag = {t: aggregate([c for c in cases if t in c.tags], k) for t in tags}
    result.latency_ms = latency(cases)


# ----------------------------------------------------------------- the run


class _Clock:
    """Accumulates seconds per bucket."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def measure(self, bucket: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[bucket] = self.seconds.get(bucket, 0.0) + time.perf_counter() - start

    def get(self, bucket: str) -> float:
        return self.seconds.get(bucket, 0.0)


def default_depth(k: int) -> int:
    """Chunks retrieved for the retrieval metrics: enough for k and for the @10 metrics."""
    return min(MAX_DEPTH, max(2 * k, 20))


def profile_settings(profile: str, dataset: EvalDataset, *, data_dir: str | Path | None,
                     config_file: str | Path | None, collection: str | None) -> RagSettings:
    """A profile's settings over the dataset's collection (config file and env still apply)."""
    from ragloom.settings import resolve_settings

    return resolve_settings(profile=profile, config_file=config_file, data_dir=data_dir,
                            collection=collection or dataset.collection)


def _chunk_texts(settings: RagSettings, ids: list[str]) -> dict[str, str]:
    """Full texts of chunks by id (citations carry clipped snippets only)."""
    if not ids:
        return {}
    return {c.id: c.text for c in resources.document_index(settings).get_chunks(ids)}


def run_eval(
    dataset: EvalDataset,
    profiles: Sequence[str],
    *,
    k: int = 5,
    limit: int | None = None,
    depth: int | None = None,
    data_dir: str | Path | None = None,
    config_file: str | Path | None = None,
    collection: str | None = None,
    judge: str = "auto",
    answers: bool = True,
    progress: ProgressFn | None = None,
) -> EvalReport:
    """Ingest the dataset's corpus, then evaluate each profile on its cases."""
    from ragloom.profiles.presets import profile_names
    from ragloom.runner import ask, ingest, retrieve
    from ragloom.settings import resolve_settings

    started = time.perf_counter()
    load_start = _load_average()
    if not profiles:
        raise ConfigError("no profile to evaluate", hint=f"known: {', '.join(profile_names())}")
    if k < 1:
        raise ConfigError(f"k must be at least 1 (got {k})", where="eval")
    depth = depth or default_depth(k)
    if not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"depth must be between 1 and {MAX_DEPTH} (got {depth})", where="eval")
    all_settings = [profile_settings(p, dataset, data_dir=data_dir, config_file=config_file,
                                     collection=collection) for p in profiles]
    dataset = dataset.limited(limit)
    clock = _Clock()
    base = all_settings[0]

    with clock.measure("ingest"):
        report = ingest(dataset.corpus, settings=base,
                        progress=(lambda d, t: progress("ingest", d, t)) if progress else None)
    if report.failed:
        raise ConfigError(f"{len(report.failed)} corpus source(s) failed to ingest: "
                          + "; ".join(f"{s.source_id}: {'; '.join(s.errors)}" for s in report.failed),
                          where=str(dataset.path))
    _check_refs(dataset, report)
    grader: Judge | None = make_judge(judge, base) if answers else None

    results: list[ProfileResult] = []
    for settings in all_settings:
        deep = resolve_settings(settings, assemble={"token_budget": UNLIMITED_BUDGET})
        meter, judge_meter = UsageMeter(), UsageMeter()
        calls_before = grader.calls if grader else 0
        fallbacks_before = grader.fallbacks if grader else 0
        cases: list[CaseResult] = []
        total = len(dataset.cases)
        if progress:
            progress(settings.profile, 0, total)
        for n, case in enumerate(dataset.cases, start=1):
            cases.append(_run_case(case, dataset, settings, deep, depth, grader, clock, meter,
                                   judge_meter, retrieve, ask))
            if progress:
                progress(settings.profile, n, total)
        with clock.measure("metrics"):
            per_query = retrieval_metrics({c.id: c.relevant for c in dataset.cases},
                                          {c.id: c.ranking for c in cases}, k)
            for result_case in cases:
                result_case.retrieval = per_query.get(result_case.id, {})
                result_case.ranking = result_case.ranking[:10]
            calls, reported, prompt, completion = meter.snapshot()
            judge_calls = judge_meter.snapshot()[0]
            result = ProfileResult(
                profile=settings.profile,
                settings=_settings_summary(settings),
                cases=cases,
                cost=Cost(model_calls=calls, calls_with_usage=reported,
                          prompt_tokens=prompt if reported else None,
                          completion_tokens=completion if reported else None,
                          judge_calls=max(judge_calls, (grader.calls - calls_before) if grader else 0),
                          judge_fallbacks=(grader.fallbacks - fallbacks_before) if grader else 0),
            )
            summarize(result, k)
        results.append(result)

    timing = Timing(
        ingest_s=clock.get("ingest"), retrieve_s=clock.get("retrieve"), ask_s=clock.get("ask"),
        judge_s=clock.get("judge"), metrics_s=clock.get("metrics"),
    )
    timing.runner_s = timing.ingest_s + timing.retrieve_s + timing.ask_s
    timing.total_s = time.perf_counter() - started
    return EvalReport(
        dataset=dataset.name, dataset_path=str(dataset.path), dataset_kind=dataset.kind,
        split=dataset.split, collection=base.collection,
        data_dir=str(resources.data_paths(base).data_dir), cases=len(dataset.cases), k=k,
        depth=depth, answers=answers, judge=grader.name if grader else "none (retrieval only)",
        profiles=results, timing=timing,
        started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        load_average={"start": load_start, "end": _load_average()},
        ingest={"sources": len(report.sources), "chunks_written": report.chunks_written,
                "embeddings_computed": report.embeddings_computed,
                "unchanged": report.count("unchanged"), "total_ms": report.total_ms},
    )


def _load_average() -> list[float]:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return []


def _check_refs(dataset: EvalDataset, report: Any) -> None:
    """Every golden ref must match an ingested source id: a typo would silently score zero."""
    if dataset.kind != "golden":
        return
    from ragloom.evaluation.datasets import match_ref

    sources = [sid for sid, status in report.statuses().items()
               if status not in ("failed", "removed")]
    missing = [ref for ref in dataset.refs if not any(match_ref(s, [ref]) for s in sources)]
    if missing:
        raise ConfigError(f"relevant ref(s) match no ingested source: {', '.join(missing)}",
                          where=str(dataset.path),
                          hint="a ref is a path suffix of a corpus file, e.g. faq.md")


def _settings_summary(settings: RagSettings) -> dict[str, Any]:
    return {
        "retrieval": settings.retrieval.mode, "candidate_k": settings.retrieval.candidate_k,
        "fusion": settings.retrieval.fusion, "rerank": settings.rerank.name,
        "top_n": settings.rerank.top_n, "groundedness": settings.groundedness.enabled,
        "chat": settings.chat.provider if settings.chat.provider == "none"
        else f"{settings.chat.provider}:{settings.chat.model}",
        "embedding": settings.embedding.model, "chunker": settings.chunker.name,
    }


def _run_case(case: EvalCase, dataset: EvalDataset, settings: RagSettings, deep: RagSettings,
              depth: int, grader: Judge | None, clock: _Clock, meter: UsageMeter,
              judge_meter: UsageMeter, retrieve: Callable[..., Any],
              ask: Callable[..., Any]) -> CaseResult:
    result = CaseResult(id=case.id, tags=case.tags, question=case.question,
                        answerable=case.answerable, relevant=sorted(case.relevant))
    with clock.measure("retrieve"), metered(meter):
        start = time.perf_counter()
        ranked = retrieve(case.question, top_n=depth, settings=deep)
        result.retrieve_ms = (time.perf_counter() - start) * 1000.0
    result.ranking = ranked_documents(dataset.doc_key(c.chunk_id, c.source_id)
                                      for c in ranked.citations)
    if grader is None:
        return result
    calls_before = meter.snapshot()[0]
    with clock.measure("retrieve"), metered(meter):
        given = retrieve(case.question, settings=settings)
    with clock.measure("ask"), metered(meter):
        start = time.perf_counter()
        answer = ask(case.question, settings=settings)
        result.ask_ms = (time.perf_counter() - start) * 1000.0
    result.model_calls = meter.snapshot()[0] - calls_before
    with clock.measure("judge"), metered(judge_meter):
        _score_answer(case, dataset, settings, given, answer, grader, result)
    return result


def _score_answer(case: EvalCase, dataset: EvalDataset, settings: RagSettings, given: Any,
                  answer: Any, grader: Judge, result: CaseResult) -> None:
    text = answer.text or ""
    result.answer = text
    result.best_effort = bool(answer.best_effort)
    result.refused = is_refusal(text)
    if case.expected:
        result.expected_hits, result.expected_total = substring_hits(text, case.expected)
    if case.reference and case.answerable:
        result.exact_match = exact_match(text, case.reference)
        result.token_f1 = token_f1(text, case.reference)
    ids = list(dict.fromkeys([c.chunk_id for c in given.citations]
                             + [c.chunk_id for c in answer.citations]))
    texts = _chunk_texts(settings, ids)
    contexts = [texts.get(c.chunk_id, c.snippet) for c in given.citations]
    cited = {c.marker: texts.get(c.chunk_id, c.snippet) for c in answer.citations}
    judged_docs = [dataset.doc_key(c.chunk_id, c.source_id) in case.relevant
                   for c in given.citations] if case.relevant else None
    scores = grader.grade(JudgeInput(
        question=case.question, answer=text, contexts=contexts, cited=cited,
        reference=case.reference if case.answerable else None,
        expected=case.expected if case.answerable else [], context_judged=judged_docs,
    ))
    result.judged = scores.metrics()
    result.markers = scores.markers
    result.unresolved_markers = scores.unresolved_markers
    result.unsupported_markers = scores.unsupported_markers
    result.uncited_claims = scores.uncited_claims
