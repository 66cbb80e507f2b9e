"""The adaptive graph: classify each question, then answer it the way it needs.

    guard → classify ─┬─ no_retrieval → direct ─────────────────────────────→ answer
                      ├─ single_shot  → retrieval (subgraph) ──────────→ [generate → groundedness] → answer
                      ├─ multi_hop    → decompose ⇉ hop (Send, parallel) → bridge ⇉ bridge_hop → merge ↗
                      └─ iterative    → the corrective graph (subgraph) → end

Single-shot questions take the balanced pipeline's own nodes (the retrieval subgraph, then the
shared answer stages), so routing them costs one classifier step; the corrective graph is compiled
with these settings and added as a subgraph node, its answer relayed with the route and the
classifier's step first in its trace. Each hop sends one probe into the retrieval subgraph;
parallel hops gather their passages through the `hops` reducer.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from ragloom.graphs.assembly import DepsSource, LangGraphNode, bind, chain, query_graph, source_of
from ragloom.graphs.corrective import build_corrective_graph
from ragloom.graphs.retrieval import compile_retrieval, hop_retrieval, retrieval_skips
from ragloom.graphs.routing import route_by_class, send_bridge_hops, send_hops
from ragloom.graphs.staged import add_retrieval, answer_skips
from ragloom.nodes import answer, classify, generate, groundedness, multihop
from ragloom.nodes.deps import RagDeps
from ragloom.state import RagAnswer, RagContext, RagState


def delegate(graph: CompiledStateGraph[Any], route: str) -> LangGraphNode:
    """A node that runs a whole profile graph for the question and relays its answer."""

    def run(state: RagState, runtime: Runtime[RagContext]) -> dict[str, Any]:
        payload = {"question": state["question"], "filters": state.get("filters"),
                   "top_n": state.get("top_n"), "max_iterations": state.get("max_iterations")}
        result: RagAnswer = graph.invoke(payload)["answer"]
        steps = [s for s in result.trace if s.stage != "guard"]
        relayed = result.model_copy(update={"route": route,
                                            "trace": [*state.get("trace", []), *steps]})
        return {"answer": relayed, "trace": steps}

    run.__name__ = route
    return run


def build_adaptive_graph(deps: RagDeps | DepsSource) -> StateGraph:
    """Wire the router, its delegates and the multi-hop branch; returns the graph uncompiled."""
    source = source_of(deps)
    settings = source.base.settings
    answering = settings.generate.enabled
    graph = query_graph()
    graph.add_node("guard", bind(answer.guard, source))
    graph.add_node("classify", bind(classify.classify, source))
    graph.add_node("direct", bind(classify.direct, source))
    add_retrieval(graph, source)
    graph.add_node("iterative", delegate(
        build_corrective_graph(source).compile(name="iterative"), "iterative"))
    retrieval = compile_retrieval(source)
    graph.add_node("decompose", bind(multihop.decompose, source))
    graph.add_node("hop", hop_retrieval(retrieval))
    graph.add_node("bridge", bind(multihop.bridge, source))
    graph.add_node("bridge_hop", hop_retrieval(retrieval))
    graph.add_node("merge", bind(multihop.merge, source))
    graph.add_node("answer", bind(answer.answer, source, answering=answering,
                                  skipped=retrieval_skips(settings) + answer_skips(settings)))
    chain(graph, [START, "guard", "classify"])
    graph.add_conditional_edges("classify", route_by_class,
                                {n: n for n in ("direct", "retrieval", "iterative", "decompose")})
    graph.add_edge("direct", "answer")
    graph.add_edge("iterative", END)
    graph.add_conditional_edges("decompose", send_hops, ["hop"])
    graph.add_edge("hop", "bridge")
    graph.add_conditional_edges("bridge", send_bridge_hops, ["bridge_hop", "merge"])
    graph.add_edge("bridge_hop", "merge")
    graph.add_edge("retrieval", "generate" if answering else "answer")
    names = ["merge"]
    if answering:
        graph.add_node("generate", bind(generate.generate, source))
        names.append("generate")
        if settings.groundedness.enabled:
            graph.add_node("groundedness", bind(groundedness.groundedness, source))
            names.append("groundedness")
    chain(graph, [*names, "answer", END])
    return graph
