"""The retrieval subgraph: [transform] → retrieve → [fuse] → [rerank] → [ranking] → assemble.

Its output is the ranked, assembled passages (and the probes a transform added), never an answer.
Every answering graph adds it as a subgraph node named `retrieval` (one box in Studio; `xray=1`
shows its inside), and multi-hop questions send each hop into it. A stage in brackets is a node only
when it does work under the settings; `retrieval_skips` says which were left out and why, for the
node that ends the answering graph to record.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ragloom.graphs.assembly import DepsSource, LangGraphNode, bind, chain, query_graph, source_of
from ragloom.nodes import assemble, fuse, ranking, rerank, retrieve, transform
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.ranking import ranking_active
from ragloom.nodes.trace import skipped_step
from ragloom.settings import RagSettings
from ragloom.state import Hop, RagState, RetrievalInput, RetrievalOutput, TraceStep

Subgraph = CompiledStateGraph[Any]


def needs_fuse(settings: RagSettings) -> bool:
    """Whether fuse does work: several probes, sibling evidence or MMR."""
    retrieval = settings.retrieval
    return settings.transform.name != "none" or retrieval.mmr or retrieval.sibling_weight > 0


def retrieval_skips(settings: RagSettings) -> list[TraceStep]:
    """Trace records of the retrieval stages these settings leave out of the subgraph."""
    skips = []
    if settings.transform.name == "none":
        skips.append(skipped_step("transform", "transform none: the question is the only probe"))
    if not needs_fuse(settings):
        skips.append(skipped_step("fuse", "one probe, no sibling evidence or MMR: nothing to fuse"))
    if settings.rerank.name == "none":
        skips.append(skipped_step("rerank", "rerank none: the fused order is kept"))
    if not ranking_active(settings.ranking):
        skips.append(skipped_step("ranking", "no per-document cap, recency boost or language "
                                             "down-rank (ranking.* off)"))
    return skips


def build_retrieval_graph(deps: RagDeps | DepsSource) -> StateGraph:
    """Wire the retrieval stages that do work under the settings; returns the graph uncompiled."""
    source = source_of(deps)
    settings = source.base.settings
    graph = query_graph(input_schema=RetrievalInput, output_schema=RetrievalOutput)
    names = []
    stages = [
        ("transform", transform.transform, settings.transform.name != "none"),
        ("retrieve", retrieve.retrieve, True),
        ("fuse", fuse.fuse, needs_fuse(settings)),
        ("rerank", rerank.rerank, settings.rerank.name != "none"),
        ("ranking", ranking.ranking, ranking_active(settings.ranking)),
        ("assemble", assemble.assemble, True),
    ]
    for name, node, included in stages:
        if included:
            graph.add_node(name, bind(node, source))
            names.append(name)
    chain(graph, [START, *names, END])
    return graph


def without_generation(deps: RagDeps) -> RagDeps:
    """The same dependencies with generation disabled (no chat model is called to answer)."""
    settings = deps.settings.model_copy(
        update={"generate": deps.settings.generate.model_copy(update={"enabled": False})}
    )
    return dataclasses.replace(deps, settings=settings)


def compile_retrieval(source: DepsSource) -> Subgraph:
    """The retrieval subgraph compiled for use as a node (named `retrieval` in Studio)."""
    return build_retrieval_graph(source).compile(name="retrieval")


def _retrieval_input(state: RagState, probe: str | None) -> dict[str, Any]:
    """What the subgraph is invoked with: the question, the probe and the per-run knobs."""
    return {"question": state["question"], "probe": probe, "filters": state.get("filters"),
            "top_n": state.get("top_n"), "lang": state.get("lang"), "ranking": state.get("ranking")}


def retrieval_rounds(subgraph: Subgraph) -> LangGraphNode:
    """The node a loop retrieves with: the subgraph for the current probe (a rewrite), else the
    question; grade then keeps whichever round it grades best."""

    def retrieval(state: RagState) -> dict[str, Any]:
        out = subgraph.invoke(_retrieval_input(state, state.get("probe")))
        return {"passages": out.get("passages") or [],
                "query_variants": out.get("query_variants") or [], "trace": out.get("trace") or []}

    return retrieval


def hop_retrieval(subgraph: Subgraph) -> LangGraphNode:
    """The node a multi-hop fan-out sends each sub-question to: one Hop, its steps traced."""

    def hop(state: RagState) -> dict[str, Any]:
        out = subgraph.invoke(_retrieval_input(state, state.get("probe")))
        index, wave = state.get("hop", 1), state.get("wave", 1)
        trace = [step.model_copy(update={"detail": {**step.detail, "hop": index, "wave": wave}})
                 for step in out.get("trace") or []]
        found = Hop(index=index, wave=wave, probe=state.get("probe") or state["question"],
                    source=state.get("source"), passages=out.get("passages") or [])
        return {"hops": [found], "trace": trace}

    return hop
