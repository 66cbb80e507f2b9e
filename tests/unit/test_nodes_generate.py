"""The generate node: extractive offline answers, marker checks, citations, chat prompt routing.

The chat model here is a scripted fake (GenericFakeChatModel / FakeListChatModel) replaying fixed
replies: the tests check routing, marker validation and citations, never answer quality.
"""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.generate import IDK, NO_CONTEXT, check_markers, extractive_answer, generate
from ragloom.nodes.text import markers_in
from ragloom.settings import RagSettings
from ragloom.state import Chunk, ScoredChunk

PASSAGES = [
    ScoredChunk(
        chunk=Chunk(
            id=f"c{i}",
            source_id=f"doc{i}.md",
            doc_id=f"doc{i}",
            text=text,
            start=10,
            end=10 + len(text),
            metadata={"title": f"Doc {i}"},
        ),
        score=1.0 - i / 10,
        score_origin="rrf",
    )
    for i, text in enumerate(
        [
            "The Lumen Station is a portable power bank. Its battery lasts twelve hours on a full "
            "charge. It weighs 400 grams.",
            "Charging the Lumen Station takes two hours with the USB-C cable.",
            "The warranty covers manufacturing defects for two years.",
        ],
        start=1,
    )
]


class RecordingChat(FakeListChatModel):
    """A scripted fake chat model that also records the prompts it received."""

    prompts: list[str] = []

    def _call(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, stop=stop, run_manager=run_manager, **kwargs)


def deps_for(chat: FakeListChatModel | None = None, **generate_settings: object) -> RagDeps:
    settings = RagSettings.model_validate({"generate": generate_settings})
    return RagDeps(settings=settings, index=None, embedder=None, chat=chat)  # type: ignore[arg-type]


def test_extractive_answer_cites_the_supporting_passage() -> None:
    update = generate(
        {"question": "How long does the Lumen battery last?", "passages": PASSAGES}, deps_for()
    )
    draft = update["draft"]
    assert draft.startswith("Its battery lasts twelve hours on a full charge [1].")
    assert [c.marker for c in update["citations"]] == sorted(set(markers_in(draft)))
    first = update["citations"][0]
    assert (first.chunk_id, first.source_id, first.start, first.metadata["title"]) == (
        "c1",
        "doc1.md",
        10,
        "Doc 1",
    )
    assert update["trace"][0].detail["generator"] == "extractive"


def test_extractive_answer_says_i_dont_know_on_unrelated_question() -> None:
    update = generate({"question": "Who painted the Mona Lisa?", "passages": PASSAGES}, deps_for())
    assert update["draft"] == IDK and update["citations"] == []
    assert update["trace"][0].detail["abstained"] is True


def test_extractive_respects_sentence_and_char_limits() -> None:
    draft = extractive_answer("Lumen Station battery charge hours", PASSAGES, 1, 900)
    assert len(markers_in(draft)) == 1
    short = extractive_answer("Lumen Station battery charge hours", PASSAGES, 4, 50)
    assert len(short) <= 50 and markers_in(short)


def test_invalid_markers_are_removed_and_traced() -> None:
    chat = RecordingChat(
        responses=["The battery lasts twelve hours [1][7]. Charging takes two hours [2, 9]."]
    )
    update = generate({"question": "battery?", "passages": PASSAGES}, deps_for(chat))
    assert update["draft"] == "The battery lasts twelve hours [1]. Charging takes two hours [2]."
    assert [c.marker for c in update["citations"]] == [1, 2]
    assert update["trace"][0].detail["removed_markers"] == [7, 9]
    assert update["trace"][0].detail["generator"] == "chat"


def test_chat_prompt_uses_the_original_question_and_edges_layout() -> None:
    chat = RecordingChat(responses=["I don't know"])
    chat.prompts = []
    update = generate(
        {"question": "Original question?", "probes": ["hyde passage"], "passages": PASSAGES},
        deps_for(chat),
    )
    prompt = chat.prompts[0]
    assert "Question: Original question?" in prompt and "hyde passage" not in prompt
    assert (
        prompt.index("[1] (doc1.md)")
        < prompt.index("[3] (doc3.md)")
        < prompt.index("[2] (doc2.md)")
    )
    assert "exactly: I don't know" in prompt
    assert update["citations"] == []


def test_check_markers_table() -> None:
    assert check_markers("A [0]. B [1].", 1) == ("A. B [1].", [1], [0])
    assert check_markers("No markers.", 2) == ("No markers.", [], [])


def test_no_passages_answers_without_a_model_call() -> None:
    chat = RecordingChat(responses=[])
    update = generate({"question": "anything", "passages": []}, deps_for(chat))
    assert update["draft"] == NO_CONTEXT and update["citations"] == []


def test_disabled_generation_is_a_traced_skip_citing_all_passages() -> None:
    update = generate({"question": "q", "passages": PASSAGES}, deps_for(enabled=False))
    assert update["draft"] == ""
    assert [c.marker for c in update["citations"]] == [1, 2, 3]
    assert update["trace"][0].detail["skipped"] is True


def test_empty_model_reply_becomes_i_dont_know() -> None:
    update = generate(
        {"question": "q", "passages": PASSAGES}, deps_for(RecordingChat(responses=[""]))
    )
    assert update["draft"] == IDK and update["trace"][0].detail["empty_reply"] is True
