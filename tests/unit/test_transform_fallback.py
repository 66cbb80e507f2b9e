"""The transform node when the chat model does not answer: offline path, traced, best-effort.

ScriptedUnavailableChat is a fake chat model whose every call times out (or is refused): these
tests check the degradation, never answer quality.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ragloom.errors import ConfigError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.transform import keyword_variant, transform
from ragloom.settings import RagSettings
from tests.unit.test_nodes_transform import QUESTION, StubBm25


class ScriptedUnavailableChat(FakeListChatModel):
    """A fake chat model whose calls raise `failure` (a time-out by default)."""

    failure: Any = TimeoutError("scripted time-out")

    def _call(self, *args: Any, **kwargs: Any) -> str:
        raise self.failure


def deps_for(name: str, chat: FakeListChatModel, bm25: object = None) -> RagDeps:
    settings = RagSettings.model_validate({"transform": {"name": name, "n_variants": 3}})
    return RagDeps(settings=settings, index=None, embedder=None, chat=chat, bm25=bm25)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["multi-query", "rag-fusion"])
def test_variants_fall_back_to_keyword_and_prf(name: str) -> None:
    bm25 = StubBm25(["The Lumen battery lasts twelve hours per charge."])
    update = transform({"question": QUESTION},
                       deps_for(name, ScriptedUnavailableChat(responses=[]), bm25))
    keyword, prf = update["query_variants"]
    assert keyword == keyword_variant(QUESTION) and prf.startswith(QUESTION)
    assert update["probes"] == [QUESTION, keyword, prf]
    assert update["best_effort"] is True
    detail = update["trace"][0].detail
    assert detail["fallback"] == "offline" and "did not answer" in detail["reason"]


def test_hyde_falls_back_to_the_question() -> None:
    update = transform({"question": QUESTION},
                       deps_for("hyde", ScriptedUnavailableChat(responses=[])))
    assert update["probes"] == [QUESTION] and update["query_variants"] == []
    assert update["best_effort"] is True and update["trace"][0].detail["fallback"] == "offline"


def test_a_working_chat_model_is_not_best_effort() -> None:
    chat = FakeListChatModel(responses=["Lumen battery life"])
    update = transform({"question": QUESTION}, deps_for("multi-query", chat))
    assert "best_effort" not in update and "fallback" not in update["trace"][0].detail


def test_rejected_credentials_are_not_swallowed() -> None:
    chat = ScriptedUnavailableChat(responses=[], failure=ConfigError("key rejected"))
    with pytest.raises(ConfigError, match="key rejected"):
        transform({"question": QUESTION}, deps_for("multi-query", chat))
