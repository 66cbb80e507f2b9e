"""ONNX Runtime encoder for sentence-transformers models of the MiniLM/BERT family, torch-free.

Whether a model can run here is read from its own files (modules.json, the pooling and model
configs, tokenizer.json), so a process that only queries never imports torch: texts are tokenised
with `tokenizers`, the transformer runs on onnxruntime, mean pooling and L2 normalisation in NumPy.
The vectors equal the torch path's to float32 rounding (max abs difference ~1e-7), so the
embedding profile, hence the collection, is unchanged.

The ONNX file is exported once from the torch weights (the one step that needs torch: at the first
ingest or query that finds no export), written then renamed under the cache directory, and reused
by every later process. onnxruntime's own telemetry store (`~/.cache/Microsoft/DeveloperTools/`)
is switched off, so nothing is written outside the cache directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ragloom.providers.scoped_env import env_defaults

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
FORMAT = 1
"""Bump when the export changes in a way the cache key would not see."""
BATCH = 16
"""Texts per forward pass; texts are sorted by length first, so a pass pads little (batches of 16
and 32 measured alike for sentences; docs/benchmarks.md)."""
_MODULES = {
    ("Transformer", "Pooling"),
    ("Transformer", "Pooling", "Normalize"),
}


class UnsupportedModelError(ValueError):
    """The model's files describe a pipeline this encoder does not reproduce exactly."""


@dataclass(frozen=True)
class ModelLayout:
    """What the files of a supported model say: where it is, its dimension and token limit."""

    path: Path
    dimension: int
    max_seq_length: int

    @classmethod
    def read(cls, model_path: str | Path) -> ModelLayout:
        """Read a sentence-transformers model directory; UnsupportedModelError says why not."""
        root = Path(model_path)
        modules = _json(root / "modules.json", "not a local sentence-transformers model directory")
        names = tuple(str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules)
        if names not in _MODULES:
            raise UnsupportedModelError(f"module pipeline {list(names)} is not "
                                        "Transformer → Pooling [→ Normalize]")
        if any(m.get("path") for m in modules[:1]):
            raise UnsupportedModelError("the transformer is not at the model root")
        pooling = _json(root / modules[1]["path"] / "config.json", "no pooling config")
        mode = pooling.get("pooling_mode")
        if mode is None:  # the older format: one boolean per mode
            on = sorted(k.removeprefix("pooling_mode_") for k, v in pooling.items()
                        if k.startswith("pooling_mode_") and v)
            mode = on[0] if len(on) == 1 else on
        if mode not in ("mean_tokens", "mean", ["mean"]):
            raise UnsupportedModelError(f"pooling {mode!r} is not mean")
        config = _json(root / "config.json", "no config.json")
        if config.get("model_type") != "bert":
            raise UnsupportedModelError(f"model type {config.get('model_type')!r} is not bert")
        st_config = _json(root / "sentence_bert_config.json", "no sentence_bert_config.json")
        if st_config.get("do_lower_case"):
            raise UnsupportedModelError("do_lower_case is set in sentence_bert_config.json")
        prompts = _json(root / "config_sentence_transformers.json", "", required=False)
        if prompts.get("default_prompt_name"):
            raise UnsupportedModelError("the model prepends a default prompt")
        if not (root / "tokenizer.json").is_file():
            raise UnsupportedModelError("no tokenizer.json")
        dimension = pooling.get("word_embedding_dimension") or config.get("hidden_size")
        max_length = st_config.get("max_seq_length")
        if not isinstance(dimension, int) or not isinstance(max_length, int):
            raise UnsupportedModelError("dimension or max_seq_length missing from the configs")
        return cls(path=root, dimension=dimension, max_seq_length=max_length)


def _json(path: Path, missing: str, *, required: bool = True) -> Any:
    """A JSON file's content; UnsupportedModelError(missing) when absent and required."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        if not required:
            return {}
        raise UnsupportedModelError(missing) from exc
    except (OSError, ValueError) as exc:
        raise UnsupportedModelError(f"unreadable {path.name}: {exc}") from exc


def _version(distribution: str) -> str:
    """An installed distribution's version without importing it ('-' when absent)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "-"


def fingerprint(model_path: Path) -> str:
    """Cache key of an export: model files (name, size, mtime) and the exporting libraries'
    versions (read from their metadata: nothing is imported)."""
    digest = hashlib.sha256(
        f"{FORMAT}|{OPSET}|{_version('torch')}|{_version('transformers')}".encode())
    files = sorted(p for p in model_path.rglob("*") if p.is_file())
    for path in files:
        stat = path.stat()
        digest.update(f"|{path.relative_to(model_path)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def export_onnx(model: Any, target: Path) -> None:
    """Export the transformer of a loaded SentenceTransformer to ONNX at target, atomically."""
    import torch

    class _LastHiddenState(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = model.tokenizer(["a short sample sentence"], return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with _atomic(target) as tmp, warnings.catch_warnings(), torch.no_grad():
        # What this export says every time, and only that: tracer notes about constant-folded
        # shape checks, the advanced-indexing note, and the legacy exporter's deprecation (the
        # TorchScript exporter is chosen on purpose, dynamo=False).
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", "Exporting aten::index operator", UserWarning)
        warnings.filterwarnings("ignore", "You are using the legacy TorchScript-based ONNX export",
                                DeprecationWarning)
        warnings.filterwarnings("ignore", "The feature will be removed", DeprecationWarning,
                                module=r"torch\.onnx")
        torch.onnx.export(
            _LastHiddenState(model[0].auto_model).eval(),
            tuple(sample[name] for name in INPUTS),
            str(tmp),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


@contextlib.contextmanager
def _atomic(target: Path) -> Iterator[Path]:
    """A temporary path beside target, renamed onto it when the block succeeds, else removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """Silence root-logger warnings (and stop them configuring logging) for the duration."""
    root = logging.getLogger()
    level, guard = root.level, logging.NullHandler()
    root.addHandler(guard)
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
        root.removeHandler(guard)


def _quantize(source: Path, target: Path) -> None:
    """Write the int8 weight-quantised copy of an exported model, atomically."""
    _onnxruntime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _atomic(target) as tmp, _quiet_root_logger():  # the quantiser advises via the root logger
        quantize_dynamic(source, tmp, weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])


def _onnxruntime() -> Any:
    """Import onnxruntime with its telemetry off: it would write ~/.cache/Microsoft/... otherwise.

    onnxruntime reads ORT_DISABLE_TELEMETRY when it is imported; the variable is set only for the
    import (unless the user set it), so the host process's environment is left as it was.
    """
    with env_defaults({"ORT_DISABLE_TELEMETRY": "1"}):
        import onnxruntime
    return onnxruntime


def _session(path: Path) -> Any:
    """An ONNX Runtime CPU session over the model at path."""
    ort = _onnxruntime()
    options = ort.SessionOptions()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Idle worker threads sleep instead of spinning: on a shared 2-core machine spinning doubled
    # the time of a query (13.9 vs 7.3 ms) and of 62 sentences (951 vs 718 ms; docs/benchmarks.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _cached_session(path: Path, build: Callable[[], None]) -> Any:
    """A session over the cached model at path, built first when missing or unreadable."""
    if not path.is_file():
        build()
    try:
        return _session(path)
    except Exception:  # noqa: BLE001 - any unreadable cache file (ort's errors are private): rebuild once
        build()
        return _session(path)


class OnnxEncoder:
    """Encode texts with ONNX Runtime: tokenise, forward, mean-pool, normalise.

    Sessions and the tokenizer load on first use. `export(target)` writes the float32 model when
    the cache has none (it needs the torch model: the caller loads it only then).
    """

    def __init__(self, layout: ModelLayout, name: str, cache_dir: Path,
                 export: Callable[[Path], None]) -> None:
        self.layout = layout
        self.path = cache_dir / "onnx" / f"{name}-{fingerprint(layout.path)}.onnx"
        self._export = export
        self._sessions: dict[bool, Any] = {}
        self._tokenizer: Any = None

    @property
    def exported(self) -> bool:
        """True when the float32 model is in the cache (a query then needs no torch)."""
        return self.path.is_file()

    def _session_for(self, int8: bool) -> Any:
        """The float32 session, or the int8 one (quantised from it on first use, then cached)."""
        if int8 not in self._sessions:
            if int8:
                self._session_for(False)
                target = self.path.with_name(f"{self.path.stem}-int8.onnx")
                self._sessions[True] = _cached_session(target, lambda: _quantize(self.path, target))
            else:
                self._sessions[False] = _cached_session(self.path, lambda: self._export(self.path))
        return self._sessions[int8]

    def _tokenize(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Token ids, attention mask and type ids, truncated to the model limit, padded right."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.layout.path / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self.layout.max_seq_length)
            self._tokenizer = tokenizer
        encodings = [self._tokenizer.encode(text) for text in texts]  # no thread pool: fork-safe
        width = max(len(e.ids) for e in encodings)
        feed = {name: np.zeros((len(texts), width), dtype=np.int64) for name in INPUTS}
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            feed["input_ids"][row, :n] = enc.ids
            feed["attention_mask"][row, :n] = enc.attention_mask
            feed["token_type_ids"][row, :n] = enc.type_ids
        return feed

    def encode(self, texts: list[str], *, int8: bool = False) -> np.ndarray:
        """Unit vectors for texts, in order; texts are run BATCH at a time, sorted by length.

        int8 runs the weight-quantised model (MatMul weights per channel): ~25% faster, vectors
        within cosine ~0.99 of float32; meant for queries against float32 document vectors.
        """
        session = self._session_for(int8)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.layout.dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            out[rows] = self._encode_batch(session, [texts[i] for i in rows])
        return out

    def _encode_batch(self, session: Any, texts: list[str]) -> np.ndarray:
        feed = self._tokenize(texts)
        hidden = session.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)
