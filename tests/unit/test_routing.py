"""The routers of graphs/routing.py as tables: state in, node name out; no graph involved."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Send

from ragloom.graphs import routing
from ragloom.graphs.routing import (
    FINISH_STEPS,
    LoopPolicy,
    route_after_check,
    route_after_grade,
    route_after_input_guard,
    route_after_scope,
    route_by_class,
    send_bridge_hops,
    send_hops,
)
from ragloom.state import Hop, Verdict


def state(*verdicts: tuple[str, str], iterations: int = 0, budget: int = 2,
          remaining: int = 50, **extra: Any) -> dict[str, Any]:
    return {"question": "q", "verdicts": [Verdict(stage=s, verdict=v) for s, v in verdicts],
            "iterations": iterations, "max_iterations": budget, "remaining_steps": remaining,
            **extra}


ANSWERING, RETRIEVAL_ONLY = LoopPolicy(answering=True), LoopPolicy(answering=False)
WEB = LoopPolicy(answering=True, web=True)


@pytest.mark.parametrize(("verdict", "iterations", "policy", "expected"), [
    ("correct", 0, ANSWERING, "generate"),
    ("correct", 0, RETRIEVAL_ONLY, "answer"),
    ("ambiguous", 0, ANSWERING, "refine"),
    ("ambiguous", 2, RETRIEVAL_ONLY, "refine"),
    ("incorrect", 0, ANSWERING, "rewrite"),
    ("incorrect", 1, ANSWERING, "rewrite"),
    ("incorrect", 2, ANSWERING, "generate"),   # budget spent, no web: best-effort answer
    ("incorrect", 2, RETRIEVAL_ONLY, "answer"),
    ("incorrect", 2, WEB, "web"),
    ("incorrect", 0, WEB, "rewrite"),          # the collection is tried first
])
def test_route_after_grade(verdict: str, iterations: int, policy: LoopPolicy,
                           expected: str) -> None:
    assert route_after_grade(state(("grade", verdict), iterations=iterations), policy) == expected


def test_web_is_searched_once() -> None:
    searched = state(("grade", "incorrect"), ("web", "searched"), ("grade", "incorrect"),
                     iterations=2)
    assert route_after_grade(searched, WEB) == "generate"


def test_the_last_grade_counts() -> None:
    assert route_after_grade(state(("grade", "incorrect"), ("grade", "correct"))) == "generate"


@pytest.mark.parametrize(("grounded", "addressed", "iterations", "expected"), [
    ("grounded", "addressed", 0, "answer"),
    (None, "addressed", 0, "answer"),            # groundedness disabled
    ("ungrounded", "addressed", 0, "rewrite"),
    ("grounded", "unaddressed", 1, "rewrite"),
    ("ungrounded", "unaddressed", 2, "answer"),  # budget spent: best-effort answer
    ("grounded", "unaddressed", 2, "answer"),
])
def test_route_after_check(grounded: str | None, addressed: str, iterations: int,
                           expected: str) -> None:
    verdicts = [("groundedness", grounded)] if grounded else []
    checked = state(*verdicts, ("answers_question", addressed), iterations=iterations)
    assert route_after_check(checked) == expected


def test_a_router_near_the_recursion_limit_trips_the_circuit_breaker() -> None:
    low = FINISH_STEPS
    assert route_after_grade(state(("grade", "incorrect"), remaining=low)) == "circuit_breaker"
    assert route_after_check(state(("answers_question", "unaddressed"),
                                   remaining=low)) == "circuit_breaker"
    assert route_after_grade(state(("grade", "incorrect"), remaining=low + 1)) == "rewrite"


@pytest.mark.parametrize("router,verdicts", [
    (route_after_grade, [("grade", "maybe")]),
    (route_after_grade, []),
    (route_after_check, [("answers_question", "perhaps")]),
    (route_after_check, [("groundedness", "sort of"), ("answers_question", "addressed")]),
    (route_after_input_guard, [("input_guard", "spam")]),
    (route_after_input_guard, []),
    (route_after_scope, [("scope", "maybe")]),
    (route_after_scope, [("input_guard", "ok")]),
])
def test_unknown_verdicts_raise(router: Any, verdicts: list[tuple[str, str]]) -> None:
    with pytest.raises(ValueError, match="unknown"):
        router(state(*verdicts))


@pytest.mark.parametrize(("route", "expected"), [
    ("no_retrieval", "direct"), ("single_shot", "retrieval"), ("iterative", "iterative"),
    ("multi_hop", "decompose"),
])
def test_route_by_class(route: str, expected: str) -> None:
    assert route_by_class({"route": route}) == expected


def test_route_by_class_raises_on_an_unknown_route() -> None:
    with pytest.raises(ValueError, match="unknown route 'teleport'"):
        route_by_class({"route": "teleport"})


def test_budget_is_read_from_the_state() -> None:
    assert routing.budget_left(state(iterations=1, budget=2))
    assert not routing.budget_left(state(iterations=2, budget=2))
    assert not routing.budget_left(state(iterations=0, budget=0))


def test_send_hops_fans_out_one_branch_per_probe() -> None:
    sends = send_hops(state(probes=["q", "X older", "Y older"], filters={"lang": "en"}, top_n=4))
    assert all(isinstance(s, Send) and s.node == "hop" for s in sends)
    assert [s.arg["probe"] for s in sends] == ["q", "X older", "Y older"]
    assert [s.arg["hop"] for s in sends] == [1, 2, 3]
    assert all(s.arg["question"] == "q" and s.arg["filters"] == {"lang": "en"}
               and s.arg["top_n"] == 4 and s.arg["wave"] == 1 for s in sends)


def test_send_bridge_hops_sends_the_plan_or_goes_to_merge() -> None:
    assert send_bridge_hops(state(bridge_plan=[])) == "merge"
    plan = [Hop(index=2, wave=2, probe="director born", source="chunk-1")]
    sends = send_bridge_hops(state(bridge_plan=plan))
    assert isinstance(sends, list) and len(sends) == 1
    assert sends[0].node == "bridge_hop"
    assert sends[0].arg["source"] == "chunk-1" and sends[0].arg["wave"] == 2


@pytest.mark.parametrize(("verdicts", "expected"), [
    ([("input_guard", "ok")], "pass"),
    ([("input_guard", "jailbreak")], "refuse"),
    ([("input_guard", "dangerous")], "refuse"),
    ([("input_guard", "pii_request")], "refuse"),
    ([("input_guard", "out_of_scope")], "refuse"),
    ([("input_guard", "jailbreak"), ("input_guard", "ok")], "pass"),
])
def test_route_after_input_guard(verdicts: list[tuple[str, str]], expected: str) -> None:
    assert route_after_input_guard(state(*verdicts)) == expected


@pytest.mark.parametrize(("verdicts", "expected"), [
    ([("input_guard", "ok"), ("scope", "in_scope")], "pass"),
    ([("input_guard", "ok"), ("scope", "out_of_scope")], "refuse"),
    ([("scope", "out_of_scope"), ("scope", "in_scope")], "pass"),
])
def test_route_after_scope(verdicts: list[tuple[str, str]], expected: str) -> None:
    assert route_after_scope(state(*verdicts)) == expected
