"""The retrieval subgraph: [transform] → retrieve → [fuse] → [rerank] → [ranking] → assemble.

Its output is the ranked, assembled passages (and the probes a transform added), never an answer.
Every answering graph adds it as a subgraph node named `retrieval` (one box in Studio; `xray=1`
shows its inside), and multi-hop questions send each hop into it. `RETRIEVAL` is its stage table:
a stage in brackets is a node only when it does work under the settings, and the answering graphs
list the ones left out, with the reason, in their own tables.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ragloom.graphs.assembly import (
    DepsSource,
    LangGraphNode,
    Stage,
    add_stages,
    chain,
    plan,
    query_graph,
    source_of,
)
from ragloom.nodes import assemble, fuse, ranking, rerank, retrieve, transform
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.ranking import ranking_active
from ragloom.settings import RagSettings
from ragloom.state import Hop, RagState, RetrievalInput, RetrievalOutput, run_knobs

Subgraph = CompiledStateGraph[Any]


def _one_probe(settings: RagSettings) -> str | None:
    """Why transform is left out: the question is the only probe."""
    if settings.transform.name == "none":
        return "transform none: the question is the only probe"
    return None


def _nothing_to_fuse(settings: RagSettings) -> str | None:
    """Why fuse is left out: one probe, no sibling evidence and no MMR."""
    retrieval = settings.retrieval
    if settings.transform.name == "none" and not retrieval.mmr and retrieval.sibling_weight <= 0:
        return "one probe, no sibling evidence or MMR: nothing to fuse"
    return None


def _no_reranker(settings: RagSettings) -> str | None:
    """Why rerank is left out: no reranker is configured."""
    return "rerank none: the fused order is kept" if settings.rerank.name == "none" else None


def _no_ranking_knob(settings: RagSettings) -> str | None:
    """Why the ranking stage is left out: no knob is on and requests may not turn one on."""
    if ranking_active(settings.ranking):
        return None
    return "no per-document cap, recency boost or language down-rank (ranking.* off)"


RETRIEVAL = (
    Stage("transform", transform.transform, _one_probe),
    Stage("retrieve", retrieve.retrieve),
    Stage("fuse", fuse.fuse, _nothing_to_fuse),
    Stage("rerank", rerank.rerank, _no_reranker),
    Stage("ranking", ranking.ranking, _no_ranking_knob),
    Stage("assemble", assemble.assemble),
)
"""The retrieval stages in order."""


def build_retrieval_graph(deps: RagDeps | DepsSource) -> StateGraph:
    """Wire the retrieval stages that do work under the settings; returns the graph uncompiled."""
    source = source_of(deps)
    graph = query_graph(input_schema=RetrievalInput, output_schema=RetrievalOutput)
    names = add_stages(graph, source, plan(RETRIEVAL, source.base.settings).nodes)
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


def retrieval_rounds(subgraph: Subgraph) -> LangGraphNode:
    """The node a loop retrieves with: the subgraph for the current probe (a rewrite), else the
    question; grade then keeps whichever round it grades best."""

    def retrieval(state: RagState) -> dict[str, Any]:
        out = subgraph.invoke({**run_knobs(state), "probe": state.get("probe")})
        return {"passages": out.get("passages") or [],
                "query_variants": out.get("query_variants") or [], "trace": out.get("trace") or []}

    return retrieval


def hop_retrieval(subgraph: Subgraph) -> LangGraphNode:
    """The node a multi-hop fan-out sends each sub-question to: one Hop, its steps traced."""

    def hop(state: RagState) -> dict[str, Any]:
        out = subgraph.invoke({**run_knobs(state), "probe": state.get("probe")})
        index, wave = state.get("hop", 1), state.get("wave", 1)
        trace = [step.model_copy(update={"detail": {**step.detail, "hop": index, "wave": wave}})
                 for step in out.get("trace") or []]
        found = Hop(index=index, wave=wave, probe=state.get("probe") or state["question"],
                    source=state.get("source"), passages=out.get("passages") or [])
        return {"hops": [found], "trace": trace}

    return hop
