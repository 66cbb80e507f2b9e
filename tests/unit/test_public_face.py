"""The public face: cheap, typed, and it leaves the host process's environment alone;
optional features name the extra that installs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import ragloom
from ragloom.errors import ConfigError
from ragloom.extras import require
from ragloom.providers.scoped_env import HF_OFFLINE, env_defaults
from tests.conftest import ROOT


def test_importing_ragloom_sets_no_environment_variable() -> None:
    script = ("import json, os\nbefore = dict(os.environ)\nimport ragloom\n"
              "ragloom.load_settings\nfrom ragloom.providers import embeddings, onnx_encoder\n"
              "print(json.dumps(sorted(set(os.environ.items()) ^ set(before.items()))))")
    env = {k: v for k, v in os.environ.items()
           if k not in HF_OFFLINE and k != "ANONYMIZED_TELEMETRY"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT / "src")}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_every_public_name_resolves() -> None:
    assert sorted(ragloom.__all__) == sorted(ragloom._EXPORTS)
    for name in ragloom.__all__:
        assert getattr(ragloom, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragloom.nope  # noqa: B018


def test_env_defaults_sets_only_missing_variables_for_the_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    with env_defaults(HF_OFFLINE):
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TOKENIZERS_PARALLELISM"] == "true"  # the user's value wins
    assert "HF_HUB_OFFLINE" not in os.environ
    assert os.environ["TOKENIZERS_PARALLELISM"] == "true"


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pytrec_eval", None)  # makes the import fail
    with pytest.raises(ConfigError,
                       match=r"needs the optional package 'pytrec_eval'.*ragloom\[eval\]"):
        require("pytrec_eval", "ragloom eval")


def test_chat_provider_without_langchain_openai_names_the_llm_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ragloom.providers import chat
    from ragloom.settings import ChatSettings

    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    chat._build_openai.cache_clear()
    settings = ChatSettings(provider="openai", base_url="http://127.0.0.1:9/v1", model="extra-test")
    with pytest.raises(ConfigError, match=r"ragloom\[llm\]"):
        chat.get_chat_model(settings)


def test_the_http_service_without_its_extra_names_the_api_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    monkeypatch.setitem(sys.modules, "fastapi", None)  # makes the import fail
    monkeypatch.delitem(sys.modules, "ragloom.api.app", raising=False)
    with pytest.raises(ConfigError, match=r"needs the optional package\(s\) fastapi.*ragloom\[api\]"):
        importlib.import_module("ragloom.api.app")


def test_ragloom_serve_without_the_api_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from ragloom.cli import app

    monkeypatch.setitem(sys.modules, "sse_starlette", None)
    monkeypatch.delitem(sys.modules, "ragloom.api.server", raising=False)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "sse_starlette" in result.stderr and "ragloom[api]" in result.stderr
    assert "Traceback" not in result.output


def test_ingest_stays_the_function_after_the_ingestion_modules_are_imported() -> None:
    import ragloom
    import ragloom.ingestion.loaders  # noqa: F401 - the import that used to shadow it

    assert callable(ragloom.ingest) and ragloom.ingest.__module__ == "ragloom.runner"
