"""A validated crew compiled into one LangGraph graph.

    sequential:   begin → [T1.knowledge.C …] → T1 → [T2.knowledge.C …] → T2 … → finish
    graph:        the same nodes wired by the crew's edges (parallel branches, fan-in)
    hierarchical: begin → manager ⇄ ([A.knowledge.C …] → A) for each agent A → finish

Each `.knowledge.C` node queries collection C for the task through the compiled retrieval
subgraph; the task (or agent) node builds the numbered block and runs the agent. The manager gives
each task in turn to an agent (its chat model decides; offline, the declared order) and stops
early, best-effort, when the recursion limit is near. State keys that tasks write concurrently
carry reducers; a new run on a thread that already ran starts from empty outputs.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps
from pydantic import BaseModel
from typing_extensions import TypedDict

from ragloom.crews.agents import Performer, choose_agent, system_prompt, task_prompt
from ragloom.crews.knowledge import build_block, knowledge_key, knowledge_node, retrieval_query
from ragloom.crews.outputs import output_path, render_output
from ragloom.crews.placeholders import interpolate, missing_inputs
from ragloom.crews.result import CrewResult, TaskOutput
from ragloom.crews.schema import CrewSpec, TaskSpec
from ragloom.errors import ChatUnavailableError, ConfigError
from ragloom.graphs.assembly import LangGraphNode
from ragloom.nodes.generate import build_citations, check_markers
from ragloom.nodes.trace import StageClock
from ragloom.settings import RagSettings
from ragloom.state import IngestionReport, ScoredChunk, TraceStep
from ragloom.stores.manifest import write_atomic

RESET = "__reset__"
MARGIN = 5
"""Supersteps the crew's recursion limit allows beyond its longest run."""
STEPS_PER_TASK = 3
"""Supersteps of one hierarchical task: manager, knowledge, agent."""
NOT_RUN = "Not run: the crew stopped at its step budget before this task (best-effort result)."


def runs(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge task-keyed updates; an update carrying RESET starts a new run's values."""
    if right and right.get(RESET):
        return {k: v for k, v in right.items() if k != RESET}
    return {**(left or {}), **(right or {})}


def run_trace(left: list[TraceStep] | None, right: list[TraceStep] | None) -> list[TraceStep]:
    """Append trace steps; the `begin` step starts a new run's trace."""
    if right and right[0].stage == "begin":
        return list(right)
    return (left or []) + (right or [])


class Assignment(BaseModel):
    """Which agent does a task and who decided (the manager's model, the file or the order)."""

    agent: str
    by: str
    reason: str = ""
    best_effort: bool = False


class CrewInput(TypedDict, total=False):
    """Input of a crew graph: the values of the crew's `{placeholders}`."""

    inputs: dict[str, Any]


class CrewOutput(TypedDict, total=False):
    """Output of a crew graph."""

    result: CrewResult


class CrewState(TypedDict, total=False):
    """Working state of a crew graph."""

    inputs: dict[str, Any]
    outputs: Annotated[dict[str, TaskOutput], runs]
    knowledge: Annotated[dict[str, list[ScoredChunk]], runs]
    blocks: Annotated[dict[str, list[ScoredChunk]], runs]
    assignments: Annotated[dict[str, Assignment], runs]
    current: str | None
    stopped: Annotated[bool, operator.or_]
    trace: Annotated[list[TraceStep], run_trace]
    result: CrewResult
    remaining_steps: RemainingSteps


@dataclass
class CrewParts:
    """Everything the crew's nodes use, built once when the crew is created."""

    spec: CrewSpec
    settings: RagSettings
    performers: dict[str, Performer]
    subgraphs: dict[tuple[str, str], Any]
    """(agent, collection) → the compiled retrieval subgraph of that collection and profile."""
    output_dir: Path
    ingestion: list[IngestionReport]
    chat: Any | None


def recursion_limit(spec: CrewSpec) -> int:
    """The crew graph's circuit breaker: its longest run in supersteps plus a margin."""
    knows = [bool(spec.agents[t.agent].knowledge) if t.agent else True for t in spec.tasks]
    if spec.process == "hierarchical":
        return 2 + STEPS_PER_TASK * len(spec.tasks) + 1 + MARGIN
    return 2 + sum(1 + k for k in knows) + MARGIN


def _begin(parts: CrewParts) -> LangGraphNode:
    spec = parts.spec

    def begin(state: CrewState) -> dict[str, Any]:
        """Check the run's inputs against the crew's placeholders and start a fresh run."""
        with StageClock("begin") as clock:
            inputs = state.get("inputs") or {}
            if not isinstance(inputs, dict):
                raise ConfigError("crew inputs must be a mapping of placeholder values",
                                  where="inputs", hint='invoke with {"inputs": {"name": ...}}')
            error = missing_inputs(spec.inputs, inputs)
            if error is not None:
                raise error
            clock.note(crew=spec.name, process=spec.process, inputs=sorted(inputs),
                       tasks=spec.order)
        fresh = {RESET: True}
        return {"inputs": inputs, "outputs": fresh, "knowledge": fresh, "blocks": fresh,
                "assignments": fresh, "current": None, "trace": clock.trace()}

    return begin


def _do_task(parts: CrewParts, state: CrewState, task: TaskSpec, performer: Performer,
             loop: Any | None, assignment: Assignment | None = None) -> dict[str, Any]:
    """Run one task with its agent: block, prompt, answer, citations, output file."""
    spec, settings = parts.spec, parts.settings
    agent, agent_id = performer.agent, performer.agent_id
    inputs = state.get("inputs") or {}
    outputs = state.get("outputs") or {}
    knowledge = state.get("knowledge") or {}
    with StageClock("task") as clock:
        own = [knowledge.get(knowledge_key(task.id, c), []) for c in agent.knowledge]
        context_ids = [c for c in spec.context_of(task.id) if c in outputs]
        blocks = state.get("blocks") or {}
        block, texts, block_detail = build_block(
            own, [(outputs[c], blocks.get(c, [])) for c in context_ids], settings)
        description = interpolate(task.description, inputs)
        system = system_prompt(agent, inputs, knows=len(block) > 0 or bool(agent.knowledge))
        prompt = task_prompt(description, interpolate(task.expected_output, inputs),
                             [(c, outputs[c].role, text) for c, text in zip(context_ids, texts, strict=True)],
                             block, settings.assemble.ordering, agent.tools)
        query = retrieval_query(task, inputs, settings.max_query_chars)
        role = interpolate(agent.role, inputs)
        outcome = performer.perform(system=system, prompt=prompt, query=query, block=block,
                                    role=role, loop=loop)
        text, cited, removed = check_markers(outcome.text, len(block))
        notes = list(outcome.notes)
        if assignment is not None:
            notes.append(f"assigned by {assignment.by}" + (f": {assignment.reason}"
                                                           if assignment.reason else ""))
        output = TaskOutput(
            task=task.id, agent=agent_id, role=role,
            description=description, text=text,
            citations=build_citations(block.passages, cited), generator=outcome.generator,
            label=outcome.label, notes=notes,
            best_effort=outcome.best_effort or bool(assignment and assignment.best_effort),
        )
        if task.output_file:
            output = _write(parts, task, inputs, output)
        clock.note(task=task.id, agent=agent_id, generator=outcome.generator, context=context_ids,
                   passages=len(block), cited=cited, removed_markers=removed,
                   best_effort=output.best_effort, **block_detail)
    return {"outputs": {task.id: output}, "blocks": {task.id: list(block.passages)},
            "trace": clock.trace()}


def _write(parts: CrewParts, task: TaskSpec, inputs: dict[str, Any],
           output: TaskOutput) -> TaskOutput:
    """Write a task's output_file; a path that would leave the output directory is refused."""
    try:
        path = output_path(parts.output_dir, task.output_file or "", inputs)
    except ConfigError as exc:
        return output.model_copy(update={"notes": [*output.notes, f"output_file refused: {exc}"],
                                         "best_effort": True})
    write_atomic(path, render_output(output))
    return output.model_copy(update={"output_file": str(path)})


def _task_node(parts: CrewParts, task: TaskSpec) -> LangGraphNode:
    performer = parts.performers[task.agent or ""]

    def run_task(state: CrewState) -> dict[str, Any]:
        """Do the task with its agent (through its agent loop, a subgraph, when it has tools)."""
        return _do_task(parts, state, task, performer, loop=performer.loop)

    run_task.__name__ = task.id
    return run_task


def _current_task(parts: CrewParts, task: TaskSpec | None = None) -> Callable[[Any], TaskSpec]:
    """How a knowledge node finds its task: fixed (sequential, graph) or the manager's current."""
    if task is not None:
        return lambda state: task
    return lambda state: parts.spec.task(state["current"])


def _knowledge_nodes(graph: StateGraph, parts: CrewParts, owner: str, agent_id: str,
                     task: TaskSpec | None) -> list[str]:
    """Add the nodes querying each collection the agent knows; returns their names."""
    agent = parts.spec.agents[agent_id]
    names = []
    for collection in agent.knowledge:
        name = f"{owner}.knowledge.{collection}"
        graph.add_node(name, knowledge_node(
            parts.subgraphs[(agent_id, collection)], collection, _current_task(parts, task),
            agent.top_n, parts.settings.max_query_chars))
        names.append(name)
    return names


def _entry(graph: StateGraph, sources: list[str], knowledge: list[str], target: str) -> None:
    """Wire sources → knowledge nodes (all waited for) → target, or sources → target."""
    start = _one_or_all(sources)
    for name in knowledge:
        graph.add_edge(start, name)
    graph.add_edge(_one_or_all(knowledge) if knowledge else start, target)


def _one_or_all(names: list[str]) -> str | list[str]:
    """An edge start: one node, or every node of a list (the edge waits for all of them)."""
    return names[0] if len(names) == 1 else names


def _final_task(spec: CrewSpec) -> str:
    """The task whose output is the crew's final output (the last sink in execution order)."""
    if spec.process == "graph":
        sources = {a for a, _ in spec.edges}
        return [t for t in spec.order if t not in sources][-1]
    return spec.order[-1]


def _finish(parts: CrewParts) -> LangGraphNode:
    spec = parts.spec

    def finish(state: CrewState) -> dict[str, Any]:
        """Collect the task outputs into the CrewResult."""
        from langgraph.config import get_config

        with StageClock("finish") as clock:
            outputs = state.get("outputs") or {}
            result = crew_result(spec, parts.ingestion, outputs, state.get("trace") or [],
                                 stopped=bool(state.get("stopped")))
            clock.note(tasks=len(result.tasks), best_effort=result.best_effort)
        thread = (get_config().get("configurable") or {}).get("thread_id")
        result = result.model_copy(update={"trace": [*result.trace, *clock.trace()],
                                           "thread_id": str(thread) if thread else None})
        return {"result": result, "trace": clock.trace()}

    return finish


def crew_result(spec: CrewSpec, ingestion: list[IngestionReport], outputs: dict[str, TaskOutput],
                trace: list[TraceStep], *, stopped: bool = False) -> CrewResult:
    """The CrewResult of a run's outputs; tasks that did not run are listed as not run."""
    ordered = []
    for task_id in spec.order:
        if task_id in outputs:
            ordered.append(outputs[task_id])
        else:
            task = spec.task(task_id)
            ordered.append(TaskOutput(task=task_id, agent=task.agent or "", role="",
                                      description=task.description, text=NOT_RUN,
                                      generator="not_run", best_effort=True))
    final = next(t for t in ordered if t.task == _final_task(spec))
    return CrewResult(crew=spec.name, process=spec.process, tasks=ordered,
                      final_output=final.text, citations=final.citations, ingestion=ingestion,
                      notices=spec.notices, trace=trace,
                      best_effort=stopped or any(t.best_effort for t in ordered))


def _offline_assignment(spec: CrewSpec, task: TaskSpec) -> Assignment:
    """The declared agent, else the agents in declared order (task i → agent i mod n)."""
    if task.agent:
        return Assignment(agent=task.agent, by="crew file")
    agents = list(spec.agents)
    position = spec.order.index(task.id)
    return Assignment(agent=agents[position % len(agents)], by="declared order")


def _manager(parts: CrewParts) -> LangGraphNode:
    spec = parts.spec

    def manager(state: CrewState) -> dict[str, Any]:
        """Give the next task to an agent, or stop when all ran or the step budget is spent."""
        with StageClock("manager") as clock:
            outputs = state.get("outputs") or {}
            pending = [t for t in spec.order if t not in outputs]
            if not pending:
                clock.note(decision="finish")
                return {"current": None, "trace": clock.trace()}
            if state["remaining_steps"] <= STEPS_PER_TASK + 1:
                clock.note(decision="stop", reason="recursion limit near", not_run=pending,
                           best_effort=True)
                return {"current": None, "stopped": True, "trace": clock.trace()}
            task = spec.task(pending[0])
            assignment = _offline_assignment(spec, task)
            if parts.chat is not None:
                assignment = _ask_manager(parts, parts.chat, state, task, assignment, clock)
            clock.note(task=task.id, agent=assignment.agent, by=assignment.by)
        return {"current": task.id, "assignments": {task.id: assignment}, "trace": clock.trace()}

    return manager


def _ask_manager(parts: CrewParts, chat: BaseChatModel, state: CrewState, task: TaskSpec,
                 fallback: Assignment, clock: StageClock) -> Assignment:
    """The manager model's choice, or the offline assignment (traced) when it has none."""
    description = interpolate(task.description, state.get("inputs") or {})
    try:
        choice = choose_agent(chat, parts.spec.manager, parts.spec.agents, description,
                              task.agent)
    except ChatUnavailableError as exc:
        clock.note(fallback=f"{fallback.by}: {exc.what}", best_effort=True)
        return fallback.model_copy(update={"best_effort": True})
    if choice is None:
        clock.note(fallback=f"{fallback.by}: the manager's reply named no known agent")
        return fallback
    return Assignment(agent=choice.agent, by="manager", reason=choice.reason)


def _agent_node(parts: CrewParts, agent_id: str) -> LangGraphNode:
    performer = parts.performers[agent_id]

    def run_agent(state: CrewState) -> dict[str, Any]:
        """Do the manager's current task with this agent (its loop is a subgraph)."""
        task = parts.spec.task(state["current"] or "")
        assignment = (state.get("assignments") or {}).get(task.id)
        return _do_task(parts, state, task, performer, performer.loop, assignment)

    run_agent.__name__ = agent_id
    return run_agent


def _manager_router(parts: CrewParts, entries: dict[str, list[str]]) -> Callable[..., Any]:
    def route(state: CrewState) -> str | list[str]:
        """Where the manager sends the run: the assigned agent (through its knowledge) or finish."""
        current = state.get("current")
        if current is None:
            return "finish"
        agent = state["assignments"][current].agent
        return entries[agent] if len(entries[agent]) > 1 else entries[agent][0]

    return route


def build_crew_graph(parts: CrewParts) -> StateGraph:
    """Wire the crew's nodes for its process; returns the graph uncompiled."""
    spec = parts.spec
    graph = StateGraph(CrewState, input_schema=CrewInput, output_schema=CrewOutput)
    graph.add_node("begin", _begin(parts))
    graph.add_node("finish", _finish(parts))
    graph.add_edge(START, "begin")
    graph.add_edge("finish", END)
    if spec.process == "hierarchical":
        graph.add_node("manager", _manager(parts))
        graph.add_edge("begin", "manager")
        entries: dict[str, list[str]] = {}
        for agent_id in spec.agents:
            graph.add_node(agent_id, _agent_node(parts, agent_id))
            knowledge = _knowledge_nodes(graph, parts, agent_id, agent_id, None)
            if knowledge:
                graph.add_edge(_one_or_all(knowledge), agent_id)
            graph.add_edge(agent_id, "manager")
            entries[agent_id] = knowledge or [agent_id]
        targets = sorted({n for names in entries.values() for n in names} | {"finish"})
        graph.add_conditional_edges("manager", _manager_router(parts, entries), targets)
        return graph
    for task in spec.tasks:
        graph.add_node(task.id, _task_node(parts, task))
    previous = ["begin"]
    for task_id in spec.order:
        task = spec.task(task_id)
        knowledge = _knowledge_nodes(graph, parts, task.id, task.agent or "", task)
        if spec.process == "graph":
            sources = [a for a, b in spec.edges if b == task_id] or ["begin"]
        else:
            sources = previous
        _entry(graph, sources, knowledge, task_id)
        previous = [task_id]
    sinks = previous if spec.process != "graph" else [
        t for t in spec.order if t not in {a for a, _ in spec.edges}]
    graph.add_edge(_one_or_all(sinks), "finish")
    return graph
