"""Settings layering: preset ← config file ← environment ← call site, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.settings import load_settings


def test_layers_override_key_by_key(tmp_path: Path) -> None:
    config = tmp_path / "ragloom.yaml"
    config.write_text("retrieval:\n  candidate_k: 70\n  rrf_k: 10\nrerank:\n  top_n: 7\n")
    env = {"RAGLOOM_RETRIEVAL__CANDIDATE_K": "80", "RAGLOOM_COLLECTION": "envcoll"}
    settings = load_settings("quality", config_file=config, environ=env, rerank={"top_n": 3})
    assert settings.retrieval.mode == "hybrid"            # preset
    assert settings.groundedness.enabled is True          # preset
    assert settings.retrieval.rrf_k == 10                 # file
    assert settings.retrieval.candidate_k == 80           # env beats file
    assert settings.collection == "envcoll"               # env
    assert settings.rerank.top_n == 3                     # call site beats file


def test_profile_presets_differ_where_the_design_says() -> None:
    fast, balanced, quality = (load_settings(p, environ={}) for p in ("fast", "balanced", "quality"))
    assert (fast.retrieval.mode, balanced.retrieval.mode) == ("vector", "hybrid")
    assert fast.retrieval.candidate_k < balanced.retrieval.candidate_k
    assert quality.retrieval == balanced.retrieval  # quality differs by the groundedness check
    assert balanced.rerank.name == "none" and fast.retrieval.sibling_weight == 0
    assert balanced.retrieval.sibling_window == 300
    assert (fast.retrieval.query_precision, balanced.retrieval.query_precision) == ("int8", "fp32")
    assert not balanced.groundedness.enabled and quality.groundedness.enabled


def test_bad_yaml_names_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("retrieval:\n  candidate_k: [1,\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_settings(config_file=config, environ={})


def test_invalid_value_and_unknown_key_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="retrieval.candidate_k"):
        load_settings(environ={"RAGLOOM_RETRIEVAL__CANDIDATE_K": "0"})
    with pytest.raises(ConfigError, match="retrieval.turbo"):
        load_settings(environ={}, retrieval={"turbo": True})
    with pytest.raises(UnknownNameError, match="known profiles: balanced, fast, quality"):
        load_settings("warp", environ={})
