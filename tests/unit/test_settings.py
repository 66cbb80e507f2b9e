"""Settings layering: preset ← config file ← environment ← call site, sources, clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.settings import (
    ChatSettings,
    default_cache_dir,
    explain_settings,
    load_settings,
    resolve_settings,
)
from tests.conftest import ROOT


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


def test_presets_can_be_passed_in() -> None:
    settings = load_settings("mine", environ={},
                             presets=lambda name: {"retrieval": {"candidate_k": 7}})
    assert settings.profile == "mine" and settings.retrieval.candidate_k == 7


def test_bad_yaml_names_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("retrieval:\n  candidate_k: [1,\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_settings(config_file=config, environ={})


def test_invalid_value_and_unknown_key_are_rejected_naming_their_origin(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="env:RAGLOOM_RETRIEVAL__CANDIDATE_K: .*candidate_k"):
        load_settings(environ={"RAGLOOM_RETRIEVAL__CANDIDATE_K": "0"})
    with pytest.raises(ConfigError, match="call: invalid setting retrieval.turbo"):
        load_settings(environ={}, retrieval={"turbo": True})
    with pytest.raises(ConfigError,
                       match="env:RAGLOOM_TURBO: invalid setting turbo.*no such setting"):
        load_settings(environ={"RAGLOOM_TURBO": "1"})
    config = tmp_path / "c.yaml"
    config.write_text("chat:\n  max_tokens: -1\n")
    with pytest.raises(ConfigError, match=r"file:.*c\.yaml: invalid setting chat\.max_tokens"):
        load_settings(config_file=config, environ={})
    with pytest.raises(UnknownNameError, match="known profiles: adaptive, balanced, corrective, fast, quality"):
        load_settings("warp", environ={})


def test_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read config file"):
        load_settings(environ={"RAGLOOM_CONFIG": str(tmp_path / "nope.yaml")})


# --------------------------------------------------------------------------------------------
# every environment variable the README documents


DOCUMENTED_ENV = {
    "RAGLOOM_DATA_DIR": ("/tmp/kb-data", "data_dir", Path("/tmp/kb-data")),
    "RAGLOOM_COLLECTION": ("2024", "collection", "2024"),  # a number stays a string
    "RAGLOOM_PROFILE": ("fast", "profile", "fast"),
    "RAGLOOM_CACHE_DIR": ("/tmp/kb-cache", "cache_dir", Path("/tmp/kb-cache")),
    "RAGLOOM_RETRIEVAL__CANDIDATE_K": ("80", "retrieval.candidate_k", 80),
    "RAGLOOM_CHAT__PROVIDER": ("none", "chat.provider", "none"),
    "RAGLOOM_CHAT__TIMEOUTS__GENERATE": ("150", "chat.timeouts.generate", 150.0),
    "RAGLOOM_API__RATE_LIMIT": ("100/minute", "api.rate_limit", "100/minute"),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED_ENV))
def test_each_documented_variable_sets_its_setting(name: str) -> None:
    raw, key, expected = DOCUMENTED_ENV[name]
    settings, sources = explain_settings(environ={name: raw})
    value: object = settings
    for part in key.split("."):
        value = getattr(value, part)
    assert value == expected
    assert sources[key] == f"env:{name}"


def test_ragloom_config_variable_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "team.yaml"
    config.write_text("collection: team\n")
    settings, sources = explain_settings(environ={"RAGLOOM_CONFIG": str(config)})
    assert settings.collection == "team" and sources["collection"] == f"file:{config}"


def test_every_variable_in_the_readme_is_tested() -> None:
    documented = set(re.findall(r"\bRAGLOOM_[A-Z_]*[A-Z]\b", (ROOT / "README.md").read_text()))
    assert documented, "the README documents no variable?"
    assert documented <= set(DOCUMENTED_ENV) | {"RAGLOOM_CONFIG"}, documented - set(DOCUMENTED_ENV)


def test_empty_variables_count_as_unset() -> None:
    assert load_settings(environ={"RAGLOOM_CHROMA_URL": ""}).chroma_url is None


def test_cache_dir_defaults_to_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ragloom"
    assert load_settings(environ={}).resolved_cache_dir() == tmp_path / "xdg" / "ragloom"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "ragloom"
    chosen = load_settings(environ={"RAGLOOM_CACHE_DIR": "~/mine"}).resolved_cache_dir()
    assert chosen == tmp_path / "home" / "mine"


# --------------------------------------------------------------------------------------------
# ./ragloom.yaml and precedence


def test_ragloom_yaml_in_the_working_directory_is_picked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragloom.yaml").write_text("collection: local\nretrieval: {candidate_k: 33}\n")
    settings, sources = explain_settings(environ={})
    assert (settings.collection, settings.retrieval.candidate_k) == ("local", 33)
    assert sources["collection"] == f"file:{tmp_path / 'ragloom.yaml'}"


def test_config_precedence_flag_then_variable_then_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("ragloom", "env", "flag"):
        (tmp_path / f"{name}.yaml").write_text(f"collection: from-{name}\n")
    env = {"RAGLOOM_CONFIG": str(tmp_path / "env.yaml")}
    assert load_settings(environ={}).collection == "from-ragloom"
    assert load_settings(environ=env).collection == "from-env"
    assert load_settings(config_file=tmp_path / "flag.yaml", environ=env).collection == "from-flag"
    # only one file is read: values of the others do not leak in
    (tmp_path / "ragloom.yaml").write_text("collection: from-ragloom\nrerank: {top_n: 9}\n")
    assert load_settings(environ=env).rerank.top_n == 5


def test_sources_name_default_preset_file_env_and_call(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("rerank: {top_n: 7}\nchat: {timeouts: {rerank: 5}}\n")
    settings, sources = explain_settings(
        "fast", config_file=config, call_origin="flag", collection="kb",
        environ={"RAGLOOM_ASSEMBLE__TOKEN_BUDGET": "900"})
    assert sources["profile"] == "flag" and settings.profile == "fast"
    assert sources["retrieval.mode"] == "preset:fast"
    assert sources["rerank.top_n"] == f"file:{config}"
    assert sources["chat.timeouts.rerank"] == f"file:{config}"
    assert sources["chat.timeouts.generate"] == "default"
    assert sources["assemble.token_budget"] == "env:RAGLOOM_ASSEMBLE__TOKEN_BUDGET"
    assert sources["collection"] == "flag"
    assert sources["chunker.size"] == "default"


def test_resolve_settings_applies_overrides_to_given_settings() -> None:
    base = load_settings("fast", environ={})
    again = resolve_settings(base, collection="other", rerank={"top_n": 2}, data_dir=None)
    assert (again.profile, again.collection, again.rerank.top_n) == ("fast", "other", 2)
    assert again.data_dir == base.data_dir


def test_chat_timeouts_per_stage() -> None:
    chat = ChatSettings(timeout_s=12, timeouts={"rerank": 3})
    assert chat.timeout_for("rerank") == 3.0
    assert chat.timeout_for("generate") == 120.0     # its own default
    assert chat.timeout_for("transform") == chat.timeout_for(None) == 12.0
    with pytest.raises(ValueError, match="timeouts.turbo"):
        ChatSettings(timeouts={"turbo": 3})
    with pytest.raises(ValueError, match="greater than 0"):
        ChatSettings(timeouts={"rerank": 0})
