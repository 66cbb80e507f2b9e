"""Judges: the heuristic judge's metrics by hand, and the LLM judge's protocol with a scripted fake.

The chat model here is a scripted fake (FakeListChatModel replaying fixed JSON replies): the tests
check prompting, parsing and fallbacks, never a model's judgement.
"""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.evaluation import judge as judge_module
from ragloom.evaluation.judge import (
    HeuristicJudge,
    JudgeInput,
    LlmJudge,
    average_precision,
    claims_of,
    make_judge,
    parse_verdicts,
    supports,
)
from ragloom.providers.chat import parse_json_reply
from ragloom.settings import load_settings


class BagOfWordsEmbedder:
    """A deterministic stand-in embedder: hashed word counts, unit length."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_array(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word.strip(".,?!"))) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


PASSAGES = [
    "The Lumen Pro keeps running for 7 days without sun thanks to its supercapacitor.",
    "The hub joins 2.4 GHz Wi-Fi networks only.",
]


def test_average_precision_matches_hand_computation() -> None:
    assert average_precision([False, True, True]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert average_precision([True, False, False]) == 1.0
    assert average_precision([False, False]) == 0.0


def test_claims_keep_their_markers() -> None:
    assert claims_of("It runs 7 days [1]. It joins Wi-Fi [2][3]. So it is.") == [
        ("It runs 7 days.", [1]), ("It joins Wi-Fi.", [2, 3])]


def test_heuristic_judge_scores_a_partly_unsupported_answer() -> None:
    judge = HeuristicJudge(BagOfWordsEmbedder())
    answer = ("The Lumen Pro keeps running for 7 days without sun [1]. "
              "It also brews excellent espresso every morning [2]. Wi-Fi networks at 2.4 GHz [9].")
    scores = judge.grade(JudgeInput(
        question="How long does the Lumen Pro run without sun?", answer=answer,
        contexts=PASSAGES, cited={1: PASSAGES[0], 2: PASSAGES[1]},
        reference="The Lumen Pro runs for 7 days without sun.", expected=["7 days"]))
    assert scores.faithfulness == pytest.approx(2 / 3)  # the espresso claim is in no passage
    assert scores.markers == 3 and scores.unresolved_markers == 1  # [9] resolves to nothing
    assert scores.unsupported_markers == 1  # [2] does not support the espresso claim
    assert scores.citation_validity == pytest.approx(1 / 3)
    assert scores.context_precision == 1.0  # the only useful passage is ranked first
    assert scores.context_recall == 1.0
    assert 0.0 < scores.answer_relevancy <= 1.0


def test_a_wrong_number_is_not_supported_even_with_every_word_present() -> None:
    passage = "Lumen Care costs EUR 3.99 per month and can be cancelled at any time."
    assert supports("Lumen Care costs EUR 3.99 per month.", passage)
    assert not supports("Lumen Care costs EUR 4.99 per month.", passage)
    assert not supports("Lumen Care can be paid by cheque.", passage)
    judge = HeuristicJudge(BagOfWordsEmbedder())
    assert judge.supported(["Care costs EUR 3.99 per month.", "Care costs EUR 5 per month."],
                           ["unrelated text", passage]) == [True, False]


def test_heuristic_context_metrics_follow_the_ranking_and_the_reference() -> None:
    judge = HeuristicJudge(BagOfWordsEmbedder())
    item = JudgeInput(question="q?", answer="The hub joins 2.4 GHz Wi-Fi networks only [1].",
                      contexts=list(reversed(PASSAGES)), cited={1: PASSAGES[1]},
                      reference="It runs for 7 days without sun. It weighs 1.9 kg.")
    scores = judge.grade(item)
    assert scores.context_precision == pytest.approx(1 / 2)  # useful passage at rank 2
    assert scores.context_recall == pytest.approx(1 / 2)  # the weight is in no passage
    assert scores.citation_validity == 1.0 and scores.uncited_claims == 0


def test_refusals_score_zero_relevancy_and_no_claims() -> None:
    embedder = BagOfWordsEmbedder()
    judge = HeuristicJudge(embedder)
    scores = judge.grade(JudgeInput(question="Capital of Peru?", answer="I don't know",
                                    contexts=PASSAGES))
    assert scores.answer_relevancy == 0.0
    assert scores.faithfulness is None and scores.citation_validity is None
    assert scores.context_precision is None and scores.context_recall is None
    assert embedder.texts == []  # nothing was embedded for a refusal


def test_judged_documents_stand_in_for_a_missing_reference() -> None:
    judge = HeuristicJudge(BagOfWordsEmbedder())
    scores = judge.grade(JudgeInput(question="q?", answer="x y z [1].", contexts=PASSAGES,
                                    cited={1: PASSAGES[0]}, context_judged=[False, True]))
    assert scores.context_precision == pytest.approx(0.5)
    assert scores.context_recall is None


def test_heuristic_embeddings_are_cached_by_text() -> None:
    embedder = BagOfWordsEmbedder()
    judge = HeuristicJudge(embedder)
    judge.relevancy("How long?", "Seven days [1].")
    judge.relevancy("How long?", "Seven days [1].")
    assert embedder.texts == ["How long?", "Seven days."]


@pytest.mark.parametrize("reply,n,expected", [
    ('{"verdicts": [1, 0]}', 2, [True, False]),
    ('Sure!\n```json\n{"verdicts": ["yes", "no", true]}\n```', 3, [True, False, True]),
    ('{"verdicts": [{"verdict": 1}]} trailing {junk}', 1, [True]),
    ('{"verdicts": [1]}', 2, None),
    ('{"verdicts": [0.5]}', 1, None),
    ("no json here", 1, None),
])
def test_verdict_parsing_is_tolerant_but_exact_on_counts(reply: str, n: int,
                                                         expected: list[bool] | None) -> None:
    assert parse_verdicts(reply, n) == expected


def test_parse_json_reply_for_objects_returns_none_for_non_objects() -> None:
    assert parse_json_reply('{"a": 1}', dict) == {"a": 1}
    assert parse_json_reply("[1, 2]", dict) is None
    assert parse_json_reply("", dict) is None


def test_llm_judge_uses_the_models_verdicts_and_falls_back_when_unusable() -> None:
    replies = [
        '{"verdicts": [1, 0]}',                                  # faithfulness
        '{"question": "How long does it run?", "noncommittal": 0}',  # relevancy
        "I refuse to answer in JSON",                             # citations -> fallback
        '{"verdicts": [0, 1]}',                                   # context precision
        '{"verdicts": [1]}',                                      # context recall
    ]
    chat = FakeListChatModel(responses=replies)
    judge = LlmJudge(chat, "fake:scripted", HeuristicJudge(BagOfWordsEmbedder()))
    scores = judge.grade(JudgeInput(
        question="How long does it run?",
        answer="The Lumen Pro keeps running for 7 days without sun [1]. It makes coffee [2].",
        contexts=PASSAGES, cited={1: PASSAGES[0], 2: PASSAGES[1]},
        reference="7 days without sun."))
    assert judge.calls == 5 and judge.fallbacks == 1
    assert scores.faithfulness == 0.5
    assert scores.answer_relevancy == pytest.approx(1.0)  # same question regenerated
    assert scores.citation_validity == 0.5  # heuristic fallback: [1] supports, [2] does not
    assert scores.context_precision == pytest.approx(0.5)
    assert scores.context_recall == 1.0
    assert "llm" in judge.name and "fake:scripted" in judge.name


def test_llm_judge_noncommittal_answer_scores_zero_relevancy() -> None:
    chat = FakeListChatModel(responses=['{"question": "?", "noncommittal": 1}'])
    judge = LlmJudge(chat, "fake", HeuristicJudge(BagOfWordsEmbedder()))
    assert judge.relevancy("Where is the data?", "It depends on many things.") == 0.0


def test_make_judge_picks_by_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_module, "HeuristicJudge",
                        lambda embedder, embedder_name: HeuristicJudge(None, embedder_name))
    from ragloom import resources

    monkeypatch.setattr(resources, "embedder", lambda settings: None)
    offline = load_settings("balanced")
    assert make_judge("auto", offline).kind == "heuristic"
    assert make_judge("heuristic", offline).kind == "heuristic"
    with pytest.raises(ConfigError, match="llm judge needs a chat model"):
        make_judge("llm", offline)
    with pytest.raises(UnknownNameError, match="known judges"):
        make_judge("oracle", offline)
    online = load_settings("balanced", chat={"provider": "openai", "base_url": "http://127.0.0.1:9/v1"})
    assert make_judge("auto", online).kind == "llm"
