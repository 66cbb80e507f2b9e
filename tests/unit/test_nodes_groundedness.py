"""The groundedness node: heuristic support of cited claims, LLM verdict parsing and fallbacks.

The chat model is a scripted fake (FakeListChatModel): the tests check parsing and routing only.
"""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.groundedness import groundedness, heuristic_score, parse_llm_verdict
from ragloom.settings import RagSettings
from ragloom.state import Chunk, ScoredChunk

PASSAGES = [
    ScoredChunk(
        chunk=Chunk(id=f"c{i}", source_id="s", doc_id="d", text=text, start=0, end=len(text)),
        score=1.0,
        score_origin="rrf",
    )
    for i, text in enumerate(
        [
            "The Lumen battery lasts twelve hours on a full charge.",
            "The warranty covers manufacturing defects for two years.",
        ],
        start=1,
    )
]
SUPPORTED = (
    "The Lumen battery lasts twelve hours [1]. The warranty covers defects for two years [2]."
)
UNSUPPORTED = "The Lumen battery lasts twelve hours [2]. It was designed on Mars by penguins [1]."


def deps_for(
    checker: str = "heuristic", chat: FakeListChatModel | None = None, enabled: bool = True
) -> RagDeps:
    settings = RagSettings.model_validate(
        {"groundedness": {"enabled": enabled, "checker": checker, "threshold": 0.5}}
    )
    return RagDeps(settings=settings, index=None, embedder=None, chat=chat)  # type: ignore[arg-type]


def check(draft: str, deps: RagDeps) -> dict:
    return groundedness({"question": "q", "draft": draft, "passages": PASSAGES}, deps)


@pytest.mark.parametrize(
    ("draft", "score"),
    [
        (SUPPORTED, 1.0),
        (UNSUPPORTED, 0.0),  # right claim, wrong citation; invented claim
        ("The Lumen battery lasts twelve hours [1]. It was designed on Mars [1].", 0.5),
        ("The Lumen battery lasts twelve hours.", 0.0),  # uncited claim
    ],
)
def test_heuristic_score_table(draft: str, score: float) -> None:
    assert heuristic_score(draft, PASSAGES)[0] == score


def test_heuristic_verdicts() -> None:
    (good,) = check(SUPPORTED, deps_for())["verdicts"]
    (bad,) = check(UNSUPPORTED, deps_for())["verdicts"]
    assert (good.verdict, good.score, good.stage) == ("grounded", 1.0, "groundedness")
    assert (bad.verdict, bad.score) == ("ungrounded", 0.0)
    assert "0/2 claims" in bad.reason


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"grounded": true, "score": 0.9}', (True, 0.9)),
        ('Sure! ```json\n{"grounded": "false", "score": "0.2"}\n```', (False, 0.2)),
        ('{"score": 0.7}', (True, 0.7)),
        ('{"grounded": false}', (False, 0.0)),
        ('{"grounded": true, "score": 3}', (True, 1.0)),
        ("grounded: yes", None),
        ('{"verdict": "ok"}', None),
    ],
)
def test_parse_llm_verdict_cases(reply: str, expected: tuple[bool, float] | None) -> None:
    assert parse_llm_verdict(reply, 0.5) == expected


def test_llm_checker_uses_the_model_verdict() -> None:
    chat = FakeListChatModel(responses=['{"grounded": false, "score": 0.1}'])
    update = check(SUPPORTED, deps_for("llm", chat))
    assert update["verdicts"][0].verdict == "ungrounded"
    assert update["trace"][0].detail["checker"] == "llm"


def test_llm_parse_failure_falls_back_to_heuristic_traced() -> None:
    update = check(SUPPORTED, deps_for("llm", FakeListChatModel(responses=["looks fine to me"])))
    assert update["verdicts"][0].verdict == "grounded"
    detail = update["trace"][0].detail
    assert detail["checker"] == "heuristic" and "unparseable" in detail["fallback"]


def test_llm_checker_without_chat_uses_heuristic_traced() -> None:
    update = check(SUPPORTED, deps_for("llm"))
    assert update["trace"][0].detail["fallback"] == "heuristic: llm checker needs a chat model"


def test_disabled_is_a_traced_skip() -> None:
    update = check(SUPPORTED, deps_for(enabled=False))
    assert update["verdicts"] == [] and update["trace"][0].detail["skipped"] is True


def test_abstention_has_no_claims_to_check() -> None:
    (verdict,) = check("I don't know", deps_for())["verdicts"]
    assert verdict.verdict == "grounded" and "abstention" in verdict.reason


def test_an_ungrounded_verdict_marks_the_answer_best_effort() -> None:
    assert check(UNSUPPORTED, deps_for())["best_effort"] is True
    assert "best_effort" not in check(SUPPORTED, deps_for())


def test_a_wrong_number_is_not_supported() -> None:
    score, supported, claims = heuristic_score("The battery lasts 14 hours on a full charge [1].",
                                               [*PASSAGES, PASSAGES[0].model_copy(update={
                                                   "chunk": PASSAGES[0].chunk.model_copy(update={
                                                       "text": "The battery lasts 12 hours on a "
                                                               "full charge."})})])
    assert (score, supported, claims) == (0.0, 0, 1)
