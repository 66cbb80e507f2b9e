"""The corrective graph (CRAG + Self-RAG): retrieve, grade, correct, answer, check, loop.

    guard → [input_guard] → retrieval → grade ─┬─ correct ──────────→ [scope] → generate
                                               ├─ ambiguous → refine ─→ [scope] → generate
                                               ├─ incorrect → rewrite → retrieval (loop)
                                               └─ incorrect, budget spent → [web] → grade
    generate → groundedness → answers_question ─┬─ pass → [output_guard] → answer
                                                └─ fail → rewrite

A question the input guard refuses, or whose passages the scope check finds irrelevant, goes to
`refuse` → answer (graphs/guards.py). The circuit breaker's answer also passes the output guard.

Both checks failing loops through rewrite while the budget lasts; a spent budget answers
best-effort (the answer node flags it from the failed verdicts); when the recursion limit is
close a router sends the run to the circuit breaker instead. `web` is a node only when the profile
policy (`loop.web`) and the transport (`web.search_url`) both enable it. Retrieval-only runs
(`generate.enabled` off) grade, rewrite and refine, then answer with the passages as citations.
`corrective_table` lists every stage in order, with the rules that leave some out.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

from langgraph.graph import END, StateGraph

from ragloom.graphs.assembly import (
    ANSWER,
    DepsSource,
    Stage,
    add_answer,
    add_stages,
    chain,
    plan,
    query_graph,
    source_of,
)
from ragloom.graphs.guards import (
    OUTPUT_GUARD,
    REFUSE,
    SCOPE,
    add_guarded_start,
    add_output_guard,
    add_scope,
    entry,
)
from ragloom.graphs.retrieval import RETRIEVAL, compile_retrieval, retrieval_rounds
from ragloom.graphs.routing import LoopPolicy, route_after_check, route_after_grade
from ragloom.graphs.staged import ANSWER_STAGES, NO_DRAFT
from ragloom.nodes import answer, answers_question, grade, refine, rewrite, web
from ragloom.nodes.deps import RagDeps
from ragloom.settings import RagSettings


def _web_off(settings: RagSettings) -> str | None:
    """Why web search is left out: the profile policy or the search endpoint is missing."""
    if not settings.loop.web:
        return "web search disabled: loop.web is off"
    return None if settings.web.search_url else "web search disabled: web.search_url is not set"


def _no_draft(settings: RagSettings) -> str | None:
    """Why the answers-question check is left out: no draft (retrieval-only)."""
    return None if settings.generate.enabled else NO_DRAFT


GRADE = Stage("grade", grade.grade)
REFINE = Stage("refine", refine.refine)
REWRITE = Stage("rewrite", rewrite.rewrite)
WEB = Stage("web", web.web, _web_off)
CHECKS = (*ANSWER_STAGES, Stage("answers_question", answers_question.answers_question, _no_draft))
"""Draft, then the two checks a failing answer loops on."""
CIRCUIT_BREAKER = Stage("circuit_breaker", answer.circuit_breaker)


def corrective_table(input_guarded: bool = True) -> tuple[Stage, ...]:
    """Every stage of the corrective graph, in the order an answer's trace lists them (the
    retrieval stages are the nodes of the subgraph the `retrieval` node runs)."""
    return (*entry(input_guarded), *RETRIEVAL, GRADE, REFINE, REWRITE, WEB, SCOPE, *CHECKS,
            OUTPUT_GUARD, CIRCUIT_BREAKER, REFUSE, ANSWER)


def build_corrective_graph(deps: RagDeps | DepsSource, *,
                           input_guarded: bool = True) -> StateGraph:
    """Wire the corrective loop and its guards for these settings; returns the graph uncompiled.
    `input_guarded=False` leaves the input guard out (the adaptive graph's delegate)."""
    source = source_of(deps)
    settings = source.base.settings
    answering = settings.generate.enabled
    policy = LoopPolicy(answering=answering, web=WEB.runs(settings))
    graph = query_graph()
    graph.add_node("retrieval", retrieval_rounds(compile_retrieval(source)))
    add_stages(graph, source, [GRADE, REFINE, REWRITE, CIRCUIT_BREAKER])
    add_answer(graph, source, corrective_table(input_guarded))
    add_guarded_start(graph, source, "retrieval", input_guarded=input_guarded)
    graph.add_edge("retrieval", "grade")
    finish = add_scope(graph, source) if answering else "answer"
    done = add_output_guard(graph, source) if answering else "answer"
    grade_paths: dict[Hashable, str] = {
        "refine": "refine", "rewrite": "rewrite", "circuit_breaker": "circuit_breaker",
        ("generate" if answering else "answer"): finish}
    if policy.web:
        add_stages(graph, source, [WEB])
        graph.add_edge("web", "grade")
        grade_paths["web"] = "web"
    graph.add_conditional_edges("grade", functools.partial(route_after_grade, policy=policy),
                                grade_paths)
    graph.add_edge("refine", finish)
    graph.add_edge("rewrite", "retrieval")
    graph.add_edge("circuit_breaker", done)
    if answering:
        chain(graph, add_stages(graph, source, plan(CHECKS, settings).nodes))
        graph.add_conditional_edges("answers_question", route_after_check,
                                    {"answer": done, "rewrite": "rewrite",
                                     "circuit_breaker": "circuit_breaker"})
    graph.add_edge("answer", END)
    return graph
