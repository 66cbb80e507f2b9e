"""The transform node: routing by name, tolerant parsing of variants, offline degradations.

The chat model here is a scripted fake (FakeListChatModel) replaying fixed replies: these tests
check routing and parsing, never answer quality.
"""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ragloom.errors import UnknownNameError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.transform import TRANSFORMS, keyword_variant, parse_variants, transform
from ragloom.settings import RagSettings
from ragloom.state import Chunk, ScoredChunk

QUESTION = "How long does the Lumen battery last?"


def scripted_chat(*replies: str) -> FakeListChatModel:
    """A scripted fake chat model that replays replies in order."""
    return FakeListChatModel(responses=list(replies))


class StubBm25:
    """BM25 stand-in returning fixed hits for any query."""

    def __init__(self, texts: list[str]) -> None:
        self.hits = [
            ScoredChunk(
                chunk=Chunk(id=f"c{i}", source_id="s", doc_id="d", text=t, start=0, end=len(t)),
                score=1.0 / (i + 1),
                score_origin="bm25",
            )
            for i, t in enumerate(texts)
        ]
        self.queries: list[str] = []

    def search(self, query: str, k: int, where: object = None) -> list[ScoredChunk]:
        self.queries.append(query)
        return self.hits[:k]


def deps_for(
    name: str, chat: FakeListChatModel | None = None, bm25: object = None, n: int = 3
) -> RagDeps:
    """Deps with only what the transform node touches."""
    settings = RagSettings.model_validate({"transform": {"name": name, "n_variants": n}})
    return RagDeps(settings=settings, index=None, embedder=None, chat=chat, bm25=bm25)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("1. battery life of Lumen\n2. Lumen charge duration\n3. Lumen runtime", 3),
        ("- \"battery life of Lumen\"\n- 'Lumen charge duration'", 2),
        ('["battery life of Lumen", "Lumen charge duration", "Lumen runtime", "extra one"]', 3),
        ('Here are the queries:\n{"queries": ["battery life of Lumen"]}', 1),
        (
            "Here are 3 queries:\nQuery 1: battery life of Lumen\n\nQuery 2: battery life of Lumen",
            1,
        ),
        (f"{QUESTION}\n  how long does the lumen battery last?  ", 0),
        ("", 0),
        ("???\n---\n", 0),
    ],
)
def test_parse_variants_cases(reply: str, expected: int) -> None:
    variants = parse_variants(reply, 3, QUESTION)
    assert len(variants) == expected
    assert all(v and v[0] not in "-\"'0123456789" for v in variants)
    if expected:
        assert variants[0] == "battery life of Lumen"


def test_none_uses_the_question() -> None:
    update = transform({"question": QUESTION}, deps_for("none"))
    assert update["probes"] == [QUESTION] and update["query_variants"] == []
    assert update["trace"][0].detail["transform"] == "none"


@pytest.mark.parametrize("name", ["multi-query", "rag-fusion"])
def test_llm_variants_follow_the_question(name: str) -> None:
    chat = scripted_chat("1. Lumen battery life\n2. Lumen charge duration")
    update = transform({"question": QUESTION}, deps_for(name, chat))
    assert update["probes"] == [QUESTION, "Lumen battery life", "Lumen charge duration"]
    assert update["trace"][0].detail["offline"] is False


def test_garbage_llm_output_degrades_to_the_question() -> None:
    update = transform({"question": QUESTION}, deps_for("multi-query", scripted_chat("...")))
    assert update["probes"] == [QUESTION]
    assert "no usable variants" in update["trace"][0].detail["degraded"]


def test_offline_variants_keyword_and_prf() -> None:
    bm25 = StubBm25(["The Lumen battery lasts twelve hours per charge.", "Charge via USB-C cable."])
    update = transform({"question": QUESTION}, deps_for("rag-fusion", bm25=bm25))
    keyword, prf = update["query_variants"]
    assert keyword == keyword_variant(QUESTION) == "long lumen battery last"
    assert prf.startswith(QUESTION) and "charge" in prf and "hours" in prf
    assert "lumen" not in prf[len(QUESTION) :].lower()
    assert update["trace"][0].detail["offline"] is True


def test_offline_variants_without_bm25_keep_the_keyword_variant() -> None:
    update = transform({"question": QUESTION}, deps_for("multi-query", n=1))
    assert update["probes"] == [QUESTION, "long lumen battery last"]


def test_hyde_uses_the_hypothetical_passage() -> None:
    passage = "The Lumen battery lasts about twelve hours on a full charge."
    update = transform({"question": QUESTION}, deps_for("hyde", scripted_chat(passage)))
    assert update["probes"] == [passage] and update["query_variants"] == [passage]


def test_hyde_without_chat_degrades_traced() -> None:
    update = transform({"question": QUESTION}, deps_for("hyde"))
    assert update["probes"] == [QUESTION]
    assert update["trace"][0].detail["degraded"] == "hyde needs a chat model"


def test_unknown_transform_lists_known_names() -> None:
    with pytest.raises(UnknownNameError) as caught:
        transform({"question": QUESTION}, deps_for("step-back"))
    assert caught.value.known == list(TRANSFORMS)
    assert "hyde" in str(caught.value) and "multi-query" in str(caught.value)
