"""Validate a crew draft (either dialect, normalised) into a CrewSpec, or list every problem.

Each problem names the file, the line and the field: unknown keys (ragloom dialect), wrong types,
an unknown agent in a task, an unknown collection in `knowledge`, an unknown tool (ragloom
dialect; CrewAI: reported, the agent runs without it), an unknown profile or chunker, a context
that names an unknown task or forms a cycle, a duplicate id, an unsafe `output_file`. Keys that
CrewAI knows and ragloom does not implement are accepted and reported once as ignored.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

from pydantic import ValidationError

from ragloom.crews.placeholders import placeholders
from ragloom.crews.schema import (
    PROCESSES,
    RESERVED_IDS,
    TOOLS,
    AgentSpec,
    CrewBody,
    CrewConfigError,
    CrewSpec,
    Notice,
    Problem,
    TaskSpec,
    slug,
)
from ragloom.crews.yamlfile import Loc, Spot

AGENT_KEYS = frozenset(AgentSpec.model_fields)
TASK_KEYS = frozenset(TaskSpec.model_fields)
CREW_KEYS = frozenset(CrewBody.model_fields)
CREWAI_AGENT_KEYS = frozenset({
    "verbose", "allow_delegation", "memory", "cache", "max_rpm", "max_execution_time",
    "max_retry_limit", "function_calling_llm", "system_template", "prompt_template",
    "response_template", "use_system_prompt", "respect_context_window", "allow_code_execution",
    "code_execution_mode", "multimodal", "inject_date", "date_format", "reasoning",
    "max_reasoning_attempts", "embedder", "step_callback", "knowledge_config",
    "knowledge_storage", "callbacks", "config", "apps", "mcps", "guardrail",
    "guardrail_max_retries", "security_config", "max_tokens", "temperature", "planning",
    "allow_feedback", "human_input", "name", "id", "use_stop_words", "a2a", "knowledge_sources",
})
"""CrewAI agent keys ragloom accepts without implementing (knowledge_sources naming files is
mapped to a collection before this check)."""
CREWAI_TASK_KEYS = frozenset({
    "name", "async_execution", "human_input", "tools", "output_json", "output_pydantic",
    "callback", "markdown", "create_directory", "guardrail", "guardrails",
    "guardrail_max_retries", "max_retries", "config", "converter_cls", "input_files",
    "allow_crewai_trigger_context", "response_model", "security_config", "output",
})
CREWAI_CREW_KEYS = frozenset({
    "verbose", "memory", "cache", "planning", "planning_llm", "manager_llm", "manager_agent",
    "function_calling_llm", "max_rpm", "language", "language_file", "full_output",
    "step_callback", "task_callback", "share_crew", "output_log_file", "embedder",
    "knowledge_sources", "prompt_file", "chat_llm", "stream", "tracing", "config", "id",
    "before_kickoff_callbacks", "after_kickoff_callbacks", "security_config",
})
FILE_KEYS = ("file_paths", "file_path", "paths", "path", "files", "source", "sources")
"""Keys of a knowledge_sources mapping entry that name files."""
_RESERVED_CHARS = re.compile(r"[:|]")
"""Characters LangGraph keeps for its own node namespaces."""
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$")


@dataclass
class Draft:
    """A crew as one dialect read it: normalised data, how to locate a path in it, and what the
    dialect already found wrong or worth reporting."""

    dialect: Literal["ragloom", "crewai"]
    name: str
    source: Path
    base_dir: Path
    raw: dict[str, Any]
    locate: Callable[[Loc], Spot]
    knowledge_dirs: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)


class _Checker:
    """Collects problems and notices while a draft is checked."""

    def __init__(self, draft: Draft) -> None:
        self.draft = draft
        self.ignored: dict[str, list[str]] = {}

    def problem(self, loc: Loc, message: str) -> None:
        """Record a problem at loc."""
        self.draft.problems.append(Problem(self.draft.locate(loc), message))

    def notice(self, kind: str, message: str, where: Iterable[str] = ()) -> None:
        """Record a notice, with the places it concerns."""
        self.draft.notices.append(Notice(kind, message, list(where)))

    def spot(self, loc: Loc) -> str:
        """The location as `file:line:field`."""
        return str(self.draft.locate(loc))

    def unknown(self, loc: Loc, what: str, name: str, known: Iterable[str]) -> None:
        """Record an unknown name, with the closest known one and the list."""
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listed = ", ".join(known) if known else "none"
        self.problem(loc, f"unknown {what} {name!r}{hint} (known: {listed})")

    def keys(self, loc: Loc, entry: dict[str, Any], implemented: frozenset[str],
             crewai: frozenset[str]) -> dict[str, Any]:
        """The implemented keys of entry; the others are reported as ignored (CrewAI's, or any
        key in a CrewAI project) or as problems (unknown keys of a ragloom crew)."""
        kept: dict[str, Any] = {}
        for key, value in entry.items():
            key = str(key)
            if key in implemented:
                if value is not None:  # null: as if not given
                    kept[key] = value
            elif key in crewai or self.draft.dialect == "crewai":
                self.ignored.setdefault(key, []).append(self.spot((*loc, key)))
            else:
                self.unknown((*loc, key), "field", key, implemented)
        return kept

    def report_ignored(self) -> None:
        """One notice per ignored key, listing every place it appears."""
        for key, where in self.ignored.items():
            self.notice("ignored", f"ignored key {key!r} (not implemented by ragloom crews)", where)


def _mapping(checker: _Checker, loc: Loc, value: Any, what: str) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    checker.problem(loc, f"{what} must be a mapping, got {type(value).__name__}")
    return None


def _files_of(entry: Any) -> list[str] | None:
    """The file names a knowledge_sources entry gives, or None when it names none."""
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict):
        for key in FILE_KEYS:
            value = entry.get(key)
            if isinstance(value, str):
                return [value]
            if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
                return list(value)
    return None


def _resolve_file(name: str, dirs: list[Path]) -> str | None:
    """The first existing file (or glob match) for name under dirs, as an absolute spec."""
    if re.match(r"^https?://", name):
        return name
    for base in dirs:
        candidate = base / name
        if any(ch in name for ch in "*?[") and list(base.glob(name)):
            return str(candidate)
        if candidate.exists():
            return str(candidate.resolve())
    return None


def _map_knowledge_sources(checker: _Checker, agents: dict[str, Any],
                           collections: dict[str, Any]) -> None:
    """Turn each agent's knowledge_sources that name files into a crew collection it knows."""
    draft = checker.draft
    by_files: dict[tuple[str, ...], str] = {}
    for agent_id, entry in agents.items():
        if not isinstance(entry, dict) or not entry.get("knowledge_sources"):
            continue
        sources = entry["knowledge_sources"]
        sources = sources if isinstance(sources, list) else [sources]
        files: list[str] = []
        for index, source in enumerate(sources):
            loc = ("agents", agent_id, "knowledge_sources", index)
            names = _files_of(source)
            if names is None:
                checker.notice("ignored", "knowledge source without files ignored (only sources "
                               "that name files become collections)", [checker.spot(loc)])
                continue
            for name in names:
                found = _resolve_file(name, draft.knowledge_dirs)
                if found is None:
                    looked = ", ".join(str(d) for d in draft.knowledge_dirs)
                    checker.notice("missing", f"knowledge file {name!r} not found under {looked}: "
                                   "the agent runs without it", [checker.spot(loc)])
                else:
                    files.append(found)
        del entry["knowledge_sources"]  # handled here: not reported again as ignored
        if not files:
            continue
        key = tuple(sorted(files))
        if key not in by_files:
            stem = Path(files[0]).stem if len(files) == 1 else agent_id
            name = base = slug(f"{draft.name}-{stem}")
            while name in collections:
                name = f"{base}-{len(by_files) + 1}"
            by_files[key] = name
            collections[name] = {"sources": files}
        knowledge = entry.get("knowledge") or []
        knowledge = [knowledge] if isinstance(knowledge, str) else list(knowledge)
        entry["knowledge"] = [*knowledge, by_files[key]]


def _tool_names(checker: _Checker, agent_id: str, tools: Any) -> list[str]:
    """A CrewAI agent's tool names; entries that are not names (tool objects, mappings) are
    reported and left out, like unknown tools."""
    tools = [tools] if isinstance(tools, str) else tools if isinstance(tools, list) else [tools]
    names = []
    for index, tool in enumerate(tools):
        if isinstance(tool, str):
            names.append(tool)
        else:
            checker.notice("tool", "a tool that is not a name is left out: the agent runs "
                           "without it", [checker.spot(("agents", agent_id, "tools", index))])
    return names


def _edge(value: Any) -> Any:
    """`a -> b` or [a, b] as a pair."""
    if isinstance(value, str) and "->" in value:
        return tuple(part.strip() for part in value.split("->", 1))
    return value


def _shape(checker: _Checker) -> CrewBody | None:
    """Structural checks and pydantic validation of the normalised draft (None: not a crew)."""
    draft = checker.draft
    raw = dict(draft.raw)
    raw.setdefault("name", draft.name)
    before = len(draft.problems)
    agents = _mapping(checker, ("agents",), raw.get("agents") or {}, "agents")
    if agents is not None and not agents:
        checker.problem(("agents",), "the crew has no agents")
    rag = raw.get("rag") if isinstance(raw.get("rag"), dict) else None
    collections = dict(rag.get("collections") or {}) if rag else {}
    if agents:
        _map_knowledge_sources(checker, agents, collections)
        kept_agents = {}
        for agent_id, entry in agents.items():
            entry = _mapping(checker, ("agents", agent_id), {} if entry is None else entry,
                             f"agent {agent_id!r}")
            if entry is not None:
                entry = checker.keys(("agents", agent_id), entry, AGENT_KEYS, CREWAI_AGENT_KEYS)
                entry.setdefault("role", str(agent_id))
                if draft.dialect == "crewai" and "tools" in entry:
                    entry["tools"] = _tool_names(checker, agent_id, entry["tools"])
                kept_agents[str(agent_id)] = entry
        raw["agents"] = kept_agents
        if draft.dialect == "crewai":  # a CrewAI project names existing collections directly
            for entry in kept_agents.values():
                known = entry.get("knowledge")
                for name in known if isinstance(known, list) else []:
                    if isinstance(name, str):
                        collections.setdefault(name, {})
    if rag is not None or collections:
        raw["rag"] = {**(rag or {}), "collections": collections}
    tasks = raw.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        checker.problem(("tasks",), "tasks must be a list" if tasks else "the crew has no tasks")
        tasks = []
    kept_tasks = []
    for index, entry in enumerate(tasks):
        entry = _mapping(checker, ("tasks", index), entry, "a task")
        if entry is not None:
            kept_tasks.append(checker.keys(("tasks", index), entry, TASK_KEYS, CREWAI_TASK_KEYS))
    raw["tasks"] = kept_tasks
    structural = any(not p.message.startswith("unknown field")
                     for p in draft.problems[before:])
    if "edges" in raw:
        raw["edges"] = [_edge(e) for e in raw["edges"] or []]
    extra = {k: v for k, v in raw.items() if k not in CREW_KEYS}
    raw = {k: v for k, v in raw.items() if k in CREW_KEYS}
    checker.keys((), extra, CREW_KEYS, CREWAI_CREW_KEYS)
    if structural:
        return None
    try:
        return CrewBody.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            checker.problem(loc, _message(error))
        return None


def _message(error: Any) -> str:
    """A pydantic error as a crew problem's message."""
    if error["type"] == "extra_forbidden":
        return f"unknown field {error['loc'][-1]!r}"
    if error["type"] == "missing":
        return "missing required field"
    return str(error["msg"])


def _order(checker: _Checker, tasks: list[TaskSpec], deps: dict[str, list[str]],
           dep_loc: Callable[[int], Loc]) -> list[str]:
    """Task ids in declared order, each moved after the tasks it depends on; cycles reported."""
    index = {t.id: i for i, t in enumerate(tasks)}
    done: list[str] = []
    pending = [t.id for t in tasks]
    while pending:
        ready = next((t for t in pending if all(d in done for d in deps[t])), None)
        if ready is None:
            cycle = _cycle(pending, deps)
            first = cycle[0]
            checker.problem(dep_loc(index[first]), "context cycle: " + " → ".join(cycle))
            return done + pending
        done.append(ready)
        pending.remove(ready)
    return done


def _cycle(pending: list[str], deps: dict[str, list[str]]) -> list[str]:
    """One dependency cycle among the pending tasks, as a path that returns to its start."""
    path = [pending[0]]
    while True:
        nxt = next(d for d in deps[path[-1]] if d in pending)
        if nxt in path:
            return path[path.index(nxt):] + [nxt]
        path.append(nxt)


def _unsafe_path(template: str) -> str | None:
    """Why an output_file template could leave the output directory, or None when it cannot."""
    if PureWindowsPath(template).is_absolute() or PurePosixPath(template).is_absolute() \
            or template.startswith(("/", "\\", "~")):
        return "is absolute"
    if ".." in PurePosixPath(template.replace("\\", "/")).parts:
        return "climbs out with '..'"
    return None


def _check_collections(checker: _Checker, shape: CrewBody) -> None:
    from ragloom.ingestion.chunkers import CHUNKERS

    for name, spec in shape.rag.collections.items():
        if not _COLLECTION_NAME.match(name):
            checker.problem(("rag", "collections", name), f"collection name {name!r} must be 3-512 "
                            "characters of letters, digits, '.', '_' or '-', starting and ending "
                            "with a letter or digit")
        if spec.chunking is not None and spec.chunking.strategy not in CHUNKERS:
            checker.unknown(("rag", "collections", name, "chunking", "strategy"), "chunker",
                            spec.chunking.strategy, CHUNKERS)


def _check_agents(checker: _Checker, shape: CrewBody) -> dict[str, AgentSpec]:
    from ragloom.profiles.presets import profile_names

    agents: dict[str, AgentSpec] = {}
    dropped: dict[str, list[str]] = {}
    for agent_id, agent in shape.agents.items():
        loc: Loc = ("agents", agent_id)
        if agent_id in RESERVED_IDS or _RESERVED_CHARS.search(agent_id):
            checker.problem(loc, f"agent id {agent_id!r} is reserved: ids may not be "
                            f"{', '.join(sorted(RESERVED_IDS))} or hold ':' or '|'")
        for i, name in enumerate(agent.knowledge):
            if name not in shape.rag.collections:
                checker.unknown((*loc, "knowledge", i), "collection", name, shape.rag.collections)
        if agent.profile is not None and agent.profile not in profile_names():
            checker.unknown((*loc, "profile"), "profile", agent.profile, profile_names())
        tools = []
        for i, name in enumerate(agent.tools):
            if name in TOOLS:
                tools.append(name)
            elif checker.draft.dialect == "ragloom":
                checker.unknown((*loc, "tools", i), "tool", name, TOOLS)
            else:
                dropped.setdefault(name, []).append(checker.spot((*loc, "tools", i)))
        agents[agent_id] = agent.model_copy(update={"tools": tools})
    for name, where in dropped.items():
        checker.notice("tool", f"unknown tool {name!r} left out: ragloom crews have "
                       f"{', '.join(TOOLS)}; the agent runs without it", where)
    llms = [f"{a} ({_llm_name(agent.llm)})" for a, agent in shape.agents.items()
            if agent.llm is not None]
    if llms:
        checker.notice("llm", "agents that name an llm use the configured chat model "
                       "(settings chat.*)", llms)
    return agents


def _llm_name(llm: Any) -> str:
    """How an agent's llm: entry is shown: its name, or a mapping's model."""
    return str(llm.get("model", llm)) if isinstance(llm, dict) else str(llm)


def _check_tasks(checker: _Checker, shape: CrewBody, process: str) -> list[TaskSpec]:
    tasks: list[TaskSpec] = []
    seen: dict[str, int] = {}
    agent_ids = list(shape.agents)
    assigned: list[str] = []
    for index, task in enumerate(shape.tasks):
        loc: Loc = ("tasks", index)
        if task.id in seen:
            checker.problem((*loc, "id"), f"duplicate task id {task.id!r} (first at "
                            f"{checker.spot(('tasks', seen[task.id], 'id'))})")
        seen.setdefault(task.id, index)
        if task.id in RESERVED_IDS or _RESERVED_CHARS.search(task.id):
            checker.problem((*loc, "id"), f"task id {task.id!r} is reserved: ids may not be "
                            f"{', '.join(sorted(RESERVED_IDS))} or hold ':' or '|'")
        agent = task.agent
        if agent is not None and agent not in shape.agents:
            checker.unknown((*loc, "agent"), "agent", agent, agent_ids)
        elif agent is None and process != "hierarchical":
            if len(agent_ids) == 1 or checker.draft.dialect == "crewai":
                agent = agent_ids[index % len(agent_ids)]
                assigned.append(f"{task.id} → {agent}")
            else:
                checker.problem((*loc, "agent"), "the task names no agent (known: "
                                f"{', '.join(agent_ids)}); only a hierarchical crew's manager "
                                "chooses agents")
        for i, name in enumerate(task.context or []):
            if name == task.id:
                checker.problem((*loc, "context", i), "a task cannot be its own context")
            elif name not in {t.id for t in shape.tasks}:
                checker.unknown((*loc, "context", i), "task", name, [t.id for t in shape.tasks])
        if task.output_file:
            why = _unsafe_path(task.output_file)
            if why:
                checker.problem((*loc, "output_file"), f"output_file {task.output_file!r} {why}: "
                                "it must stay under the crew's output directory")
        tasks.append(task.model_copy(update={"agent": agent}))
    if assigned:
        checker.notice("assigned", "tasks without an agent were given one in declared order",
                       assigned)
    return tasks


def _check_edges(checker: _Checker, shape: CrewBody, tasks: list[TaskSpec],
                 process: str) -> dict[str, list[str]]:
    """Dependencies per task: the edges' predecessors (graph process) or the explicit context."""
    ids = [t.id for t in tasks]
    if process != "graph":
        if shape.edges:
            checker.problem(("edges",), f"edges apply to process 'graph', not {process!r}")
        return {t.id: [c for c in (t.context or []) if c in ids and c != t.id] for t in tasks}
    deps: dict[str, list[str]] = {t: [] for t in ids}
    for i, (left, right) in enumerate(shape.edges):
        for name in (left, right):
            if name not in ids:
                checker.unknown(("edges", i), "task", name, ids)
        if left in ids and right in ids and left not in deps[right]:
            deps[right].append(left)
    return deps


def _ancestors(task: str, deps: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    stack = list(deps.get(task, []))
    while stack:
        name = stack.pop()
        if name not in found:
            found.add(name)
            stack.extend(deps.get(name, []))
    return found


def _inputs(spec_agents: dict[str, AgentSpec], tasks: list[TaskSpec],
            locate: Callable[[Loc], Spot]) -> dict[str, list[str]]:
    """Placeholder name → where it is used, in order of first use."""
    found: dict[str, list[str]] = {}
    for agent_id, agent in spec_agents.items():
        for key in ("role", "goal", "backstory"):
            for name in placeholders(getattr(agent, key)):
                found.setdefault(name, []).append(str(locate(("agents", agent_id, key))))
    for index, task in enumerate(tasks):
        for key in ("description", "expected_output", "output_file", "query"):
            for name in placeholders(getattr(task, key)):
                found.setdefault(name, []).append(str(locate(("tasks", index, key))))
    return found


def validate(draft: Draft) -> CrewSpec:
    """The CrewSpec of a draft, or CrewConfigError listing every problem with its place."""
    checker = _Checker(draft)
    shape = _shape(checker)
    checker.report_ignored()
    if shape is None:
        raise CrewConfigError(draft.problems)
    process = shape.process.strip().lower().removeprefix("process.")
    if process not in PROCESSES:
        checker.unknown(("process",), "process", shape.process, PROCESSES)
    _check_collections(checker, shape)
    agents = _check_agents(checker, shape)
    tasks = _check_tasks(checker, shape, process)
    deps = _check_edges(checker, shape, tasks, process)
    dep_key = "edges" if process == "graph" else "context"
    order = _order(checker, tasks, deps,
                   lambda i: ("edges",) if dep_key == "edges" else ("tasks", i, "context"))
    if process == "graph" and not draft.problems:
        for index, task in enumerate(tasks):
            upstream = _ancestors(task.id, deps)
            for i, name in enumerate(task.context or []):
                if name in {t.id for t in tasks} and name not in upstream:
                    checker.problem(("tasks", index, "context", i), f"context {name!r} is not "
                                    f"upstream of {task.id!r} in the edges: its output would not "
                                    "exist yet")
    moved = [t for t, declared in zip(order, [t.id for t in tasks], strict=True) if t != declared]
    if moved and process != "graph" and not draft.problems:
        checker.notice("order", "tasks run after the tasks their context names: "
                       + " → ".join(order))
    if draft.problems:
        raise CrewConfigError(draft.problems)
    return CrewSpec(
        name=shape.name, description=shape.description, dialect=draft.dialect,
        source=str(draft.source), base_dir=str(draft.base_dir),
        process=process,
        rag=shape.rag, agents=agents, tasks=tasks, edges=shape.edges, manager=shape.manager,
        order=order, inputs=_inputs(agents, tasks, draft.locate),
        notices=[str(n) for n in draft.notices],
    )
