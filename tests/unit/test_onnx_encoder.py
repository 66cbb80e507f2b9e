"""The ONNX Runtime query encoder against the torch path of the same packaged MiniLM model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragloom.errors import ConfigError
from ragloom.providers.embeddings import SentenceTransformerEmbedder, _onnx_encoder
from ragloom.providers.onnx_encoder import supported_pipeline
from ragloom.settings import EmbeddingSettings

TEXTS = [
    "How long does the Lumen Pro keep running without sunlight?",
    "x",
    "Vitamin D supplementation and fracture risk in adults over sixty-five: a meta-analysis "
    "of randomised controlled trials with long follow-up.",
]


@pytest.fixture(scope="module")
def embedders(tmp_path_factory: pytest.TempPathFactory) -> tuple[SentenceTransformerEmbedder, ...]:
    """ONNX and torch embedders; the ONNX model is exported into a fresh cache directory."""
    monkeypatch = pytest.MonkeyPatch()
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("RAGLOOM_CACHE_DIR", str(cache))
    try:
        onnx = SentenceTransformerEmbedder(EmbeddingSettings(runtime="onnx"))
        torch = SentenceTransformerEmbedder(EmbeddingSettings(runtime="torch"))
    finally:
        monkeypatch.undo()
    return onnx, torch


def test_onnx_vectors_equal_torch_vectors(embedders: tuple[SentenceTransformerEmbedder, ...]) -> None:
    onnx, torch = embedders
    assert onnx._onnx is not None and torch._onnx is None
    fast, reference = onnx.embed_array(TEXTS), torch.embed_array(TEXTS)
    assert fast.shape == (3, 384) and fast.dtype == np.float32
    np.testing.assert_allclose(fast, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(onnx.embed_array([TEXTS[2]])[0], fast[2], atol=1e-6)


def test_int8_queries_stay_close_and_fp32_queries_are_exact(
    embedders: tuple[SentenceTransformerEmbedder, ...],
) -> None:
    onnx, torch = embedders
    reference = torch.embed_array(TEXTS)
    quantized = onnx.embed_queries(TEXTS, precision="int8")
    cosines = (quantized * reference).sum(axis=1)
    assert cosines.min() > 0.97 and not np.allclose(quantized, reference, atol=1e-5)
    np.testing.assert_allclose(onnx.embed_queries(TEXTS), reference, atol=1e-5)
    assert (onnx._onnx.path.parent / f"{onnx._onnx.path.stem}-int8.onnx").is_file()


def test_export_is_cached_and_a_corrupt_cache_file_is_rebuilt(
    embedders: tuple[SentenceTransformerEmbedder, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    path: Path = embedders[0]._onnx.path
    monkeypatch.setenv("RAGLOOM_CACHE_DIR", str(path.parent.parent))
    stamp = path.stat().st_mtime_ns
    again = SentenceTransformerEmbedder(EmbeddingSettings(runtime="onnx"))
    assert again._onnx.path == path and path.stat().st_mtime_ns == stamp
    path.write_bytes(b"not an onnx model")
    rebuilt = SentenceTransformerEmbedder(EmbeddingSettings(runtime="onnx"))
    assert path.stat().st_size > 1_000_000
    np.testing.assert_allclose(rebuilt.embed_array(TEXTS), embedders[1].embed_array(TEXTS),
                               atol=1e-5)


def test_unsupported_pipelines_are_named() -> None:
    transformer = type("Transformer", (), {})()
    cls_pooling = type("Pooling", (), {"pooling_mode": "cls"})()
    assert "is not mean" in (supported_pipeline([transformer, cls_pooling]) or "")
    assert "is not Transformer" in (supported_pipeline([cls_pooling]) or "")


def test_runtime_onnx_fails_clearly_and_auto_falls_back_to_torch() -> None:
    unsupported = [type("Pooling", (), {"pooling_mode": "cls"})()]
    with pytest.raises(ConfigError, match="runtime 'onnx' is unavailable"):
        _onnx_encoder(unsupported, EmbeddingSettings(runtime="onnx"), "unused")
    with pytest.raises(ConfigError, match="device 'cuda' is not cpu"):
        _onnx_encoder(unsupported, EmbeddingSettings(runtime="onnx", device="cuda"), "unused")
    assert _onnx_encoder(unsupported, EmbeddingSettings(runtime="auto"), "unused") is None
