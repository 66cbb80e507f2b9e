"""The adaptive graph: classify each question, then answer it the way it needs.

    guard → [input_guard] → classify ─┬─ no_retrieval → direct ─────────────────→ [output_guard]
                                      ├─ single_shot  → retrieval (subgraph) ─┐
                                      ├─ multi_hop    → decompose ⇉ hop (Send) → bridge ⇉
                                      │                 bridge_hop → merge ─────┴→ [scope] →
                                      │                 [generate → groundedness] → [output_guard]
                                      └─ iterative    → the corrective graph (subgraph) → end
                                                                           ... → answer

Single-shot questions take the balanced pipeline's own nodes (the retrieval subgraph, then the
shared scope check, answer stages and output guard), so routing them costs one classifier step;
the corrective graph is compiled with these settings and added as a subgraph node, its answer
relayed with the route, the classifier's step first in its trace and the input guard's verdict
first among its verdicts. The question is guarded once, at the top: the corrective delegate is
built without the input guard but keeps its scope check and output guard; a refused question goes
to `refuse` → answer. Each hop sends one probe into the retrieval subgraph; parallel hops gather
their passages through the `hops` reducer.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from ragloom.graphs.assembly import (
    ANSWER,
    DepsSource,
    LangGraphNode,
    Stage,
    add_answer,
    add_stages,
    chain,
    query_graph,
    source_of,
)
from ragloom.graphs.corrective import build_corrective_graph
from ragloom.graphs.guards import (
    OUTPUT_GUARD,
    REFUSE,
    SCOPE,
    add_guarded_start,
    add_output_guard,
    add_scope,
    entry,
)
from ragloom.graphs.retrieval import RETRIEVAL, compile_retrieval, hop_retrieval
from ragloom.graphs.routing import route_by_class, send_bridge_hops, send_hops
from ragloom.graphs.staged import ANSWER_STAGES, add_answer_stages, add_retrieval
from ragloom.nodes import classify, multihop
from ragloom.nodes.deps import RagDeps
from ragloom.state import RagAnswer, RagContext, RagState, run_knobs

CLASSIFY = Stage("classify", classify.classify)
DIRECT = Stage("direct", classify.direct)
DECOMPOSE = Stage("decompose", multihop.decompose)
BRIDGE = Stage("bridge", multihop.bridge)
MERGE = Stage("merge", multihop.merge)
ADAPTIVE_TABLE = (*entry(), CLASSIFY, DIRECT, *RETRIEVAL, DECOMPOSE, BRIDGE, MERGE, SCOPE,
                  *ANSWER_STAGES, OUTPUT_GUARD, REFUSE, ANSWER)
"""Every stage of the adaptive graph's own routes, in the order an answer's trace lists them
(an iterative question is answered by the corrective graph, with its own table)."""


def delegate(graph: CompiledStateGraph[Any], route: str) -> LangGraphNode:
    """A node that runs a whole profile graph for the question and relays its answer."""

    def run(state: RagState, runtime: Runtime[RagContext]) -> dict[str, Any]:
        result: RagAnswer = graph.invoke(run_knobs(state, budget=True))["answer"]
        steps = [s for s in result.trace if s.stage != "guard"]
        relayed = result.model_copy(update={
            "route": route, "trace": [*state.get("trace", []), *steps],
            "verdicts": [*state.get("verdicts", []), *result.verdicts]})
        return {"answer": relayed, "trace": steps}

    run.__name__ = route
    return run


def build_adaptive_graph(deps: RagDeps | DepsSource) -> StateGraph:
    """Wire the router, its delegates, the multi-hop branch and the guards; returns the graph
    uncompiled."""
    source = source_of(deps)
    answering = source.base.settings.generate.enabled
    graph = query_graph()
    add_stages(graph, source, [CLASSIFY, DIRECT])
    add_retrieval(graph, source)
    graph.add_node("iterative", delegate(build_corrective_graph(
        source, input_guarded=False).compile(name="iterative"), "iterative"))
    retrieval = compile_retrieval(source)
    add_stages(graph, source, [DECOMPOSE])
    graph.add_node("hop", hop_retrieval(retrieval))
    add_stages(graph, source, [BRIDGE])
    graph.add_node("bridge_hop", hop_retrieval(retrieval))
    add_stages(graph, source, [MERGE])
    add_answer(graph, source, ADAPTIVE_TABLE)
    add_guarded_start(graph, source, "classify")
    graph.add_conditional_edges("classify", route_by_class,
                                {n: n for n in ("direct", "retrieval", "iterative", "decompose")})
    done = add_output_guard(graph, source)
    graph.add_edge("direct", done)
    graph.add_edge("iterative", END)
    graph.add_conditional_edges("decompose", send_hops, ["hop"])
    graph.add_edge("hop", "bridge")
    graph.add_conditional_edges("bridge", send_bridge_hops, ["bridge_hop", "merge"])
    graph.add_edge("bridge_hop", "merge")
    if answering:
        names = add_answer_stages(graph, source)
        first = add_scope(graph, source)
        graph.add_edge("retrieval", first)
        graph.add_edge("merge", first)
        chain(graph, [*names, done])
    else:
        graph.add_edge("retrieval", "answer")
        graph.add_edge("merge", "answer")
    graph.add_edge("answer", END)
    return graph
