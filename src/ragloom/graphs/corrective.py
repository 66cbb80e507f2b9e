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
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

from langgraph.graph import END, StateGraph

from ragloom.graphs.assembly import DepsSource, bind, chain, query_graph, source_of
from ragloom.graphs.guards import add_guarded_start, add_output_guard, add_scope, guard_skips
from ragloom.graphs.retrieval import compile_retrieval, retrieval_rounds, retrieval_skips
from ragloom.graphs.routing import LoopPolicy, route_after_check, route_after_grade
from ragloom.graphs.staged import RETRIEVAL_ONLY
from ragloom.nodes import answer, answers_question, generate, grade, groundedness, refine, rewrite
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import skipped_step
from ragloom.settings import RagSettings
from ragloom.state import TraceStep


def web_enabled(settings: RagSettings) -> bool:
    """Web search needs both the profile policy and a search endpoint."""
    return settings.loop.web and bool(settings.web.search_url)


def corrective_skips(settings: RagSettings) -> list[TraceStep]:
    """Trace records of the corrective stages these settings leave out."""
    skips = []
    if not web_enabled(settings):
        why = "loop.web is off" if not settings.loop.web else "web.search_url is not set"
        skips.append(skipped_step("web", f"web search disabled: {why}"))
    if not settings.generate.enabled:
        skips += [skipped_step("generate", RETRIEVAL_ONLY),
                  skipped_step("groundedness", "no draft to check (retrieval-only)"),
                  skipped_step("answers_question", "no draft to check (retrieval-only)")]
    elif not settings.groundedness.enabled:
        skips.append(skipped_step("groundedness", "groundedness check disabled"))
    return skips


def build_corrective_graph(deps: RagDeps | DepsSource, *,
                           input_guarded: bool = True) -> StateGraph:
    """Wire the corrective loop and its guards for these settings; returns the graph uncompiled.
    `input_guarded=False` leaves the input guard out (the adaptive graph's delegate)."""
    source = source_of(deps)
    settings = source.base.settings
    answering = settings.generate.enabled
    policy = LoopPolicy(answering=answering, web=web_enabled(settings))
    graph = query_graph()
    graph.add_node("retrieval", retrieval_rounds(compile_retrieval(source)))
    for name, node in (("grade", grade.grade), ("refine", refine.refine),
                       ("rewrite", rewrite.rewrite), ("circuit_breaker", answer.circuit_breaker)):
        graph.add_node(name, bind(node, source))
    skips = (retrieval_skips(settings) + corrective_skips(settings)
             + guard_skips(settings, input_guarded=input_guarded))
    graph.add_node("answer", bind(answer.answer, source, answering=answering, skipped=skips))
    add_guarded_start(graph, source, "retrieval", input_guarded=input_guarded)
    graph.add_edge("retrieval", "grade")
    finish = add_scope(graph, source) if answering else "answer"
    done = add_output_guard(graph, source) if answering else "answer"
    grade_paths: dict[Hashable, str] = {
        "refine": "refine", "rewrite": "rewrite", "circuit_breaker": "circuit_breaker",
        ("generate" if answering else "answer"): finish}
    if policy.web:
        from ragloom.nodes import web

        graph.add_node("web", bind(web.web, source))
        graph.add_edge("web", "grade")
        grade_paths["web"] = "web"
    graph.add_conditional_edges("grade", functools.partial(route_after_grade, policy=policy),
                                grade_paths)
    graph.add_edge("refine", finish)
    graph.add_edge("rewrite", "retrieval")
    graph.add_edge("circuit_breaker", done)
    if answering:
        checks = ["generate", *(["groundedness"] if settings.groundedness.enabled else []),
                  "answers_question"]
        graph.add_node("generate", bind(generate.generate, source))
        if settings.groundedness.enabled:
            graph.add_node("groundedness", bind(groundedness.groundedness, source))
        graph.add_node("answers_question", bind(answers_question.answers_question, source))
        chain(graph, checks)
        graph.add_conditional_edges("answers_question", route_after_check,
                                    {"answer": done, "rewrite": "rewrite",
                                     "circuit_breaker": "circuit_breaker"})
    graph.add_edge("answer", END)
    return graph
