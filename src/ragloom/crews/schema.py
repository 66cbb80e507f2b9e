"""The validated crew model both YAML dialects load into, and the problems and notices of a load.

A crew is agents (role, goal, backstory, knowledge collections, tools, an iteration budget) and
tasks (a description with `{placeholders}`, the agent that does it, the earlier tasks whose outputs
it receives), run `sequential`ly, by a `hierarchical` manager or as a `graph` of explicit edges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragloom.crews.yamlfile import Spot
from ragloom.errors import ConfigError

Process = Literal["sequential", "hierarchical", "graph"]
PROCESSES = ("sequential", "hierarchical", "graph")
TOOLS = ("rag_search", "rag_ingest", "rag_eval")
"""The tools a crew agent may name: ragloom's agent tools (`ragloom.tools`)."""
DEFAULT_MAX_ITER = 5
"""Model calls an agent with tools may make for one task before it answers best-effort."""
RESERVED_IDS = frozenset({"begin", "finish", "manager", "__start__", "__end__"})
"""Node names of the crew graph itself; no task or agent may take them."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a crew file, and where."""

    spot: Spot
    message: str

    def __str__(self) -> str:
        """The problem as `where: message`."""
        return f"{self.spot}: {self.message}"


@dataclass
class Notice:
    """Something the loader did not do as written (ignored keys, unknown tools), reported once."""

    kind: str
    message: str
    where: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        """The message with the first few places it applies to."""
        shown = ", ".join(self.where[:6]) + (f", … (+{len(self.where) - 6})"
                                            if len(self.where) > 6 else "")
        return f"{self.message} ({shown})" if shown else self.message


class CrewConfigError(ConfigError):
    """A crew file that cannot be loaded: every problem with its file, line and field."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        first = problems[0]
        more = "".join(f"\n  {p}" for p in problems[1:])
        super().__init__(first.message + more, where=str(first.spot),
                         hint="fix the crew file, then run `ragloom crew validate` again")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True,
                              str_strip_whitespace=True)


def as_list(value: Any) -> Any:
    """A single string where a list is expected becomes a one-item list; null becomes []."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else value


class Chunking(_Spec):
    """How a crew collection's sources are split (sizes in tokens of ~4 characters)."""

    strategy: str = "recursive"
    max_tokens: int = Field(256, ge=16, le=8192)
    overlap: int = Field(32, ge=0, le=4096)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Chunking:
        if self.overlap >= self.max_tokens:
            raise ValueError(f"overlap ({self.overlap}) must be below max_tokens "
                             f"({self.max_tokens})")
        return self


class CollectionSpec(_Spec):
    """A knowledge collection of the crew: sources ingested at creation (none: use it as it is)."""

    sources: list[str] = Field(default_factory=list)
    chunking: Chunking | None = None

    _list = field_validator("sources", mode="before")(as_list)


class RagSpec(_Spec):
    """The crew-level `rag:` block."""

    collections: dict[str, CollectionSpec] = Field(default_factory=dict)

    @field_validator("collections", mode="before")
    @classmethod
    def _null_collections(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: {} if v is None else v for k, v in value.items()}
        return value


class AgentSpec(_Spec):
    """One agent: who it is, what it knows, which tools it may call and its iteration budget."""

    role: str
    goal: str = ""
    backstory: str = ""
    knowledge: list[str] = Field(default_factory=list)
    profile: str | None = None
    tools: list[str] = Field(default_factory=list)
    max_iter: int = Field(DEFAULT_MAX_ITER, ge=1, le=50)
    top_n: int | None = Field(None, ge=1, le=50, description="passages per knowledge collection")
    llm: Any = None

    _lists = field_validator("knowledge", "tools", mode="before")(as_list)


class TaskSpec(_Spec):
    """One task: what to do, which agent does it, whose outputs it receives."""

    id: str
    description: str
    expected_output: str = ""
    agent: str | None = None
    context: list[str] | None = None
    """Ids of the tasks whose outputs this one receives; None: every earlier task (sequential)."""
    output_file: str | None = None
    query: str | None = None
    """What the agent's knowledge is searched for (default: the description, see
    `knowledge.retrieval_query`)."""

    @field_validator("context", mode="before")
    @classmethod
    def _context_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ManagerSpec(_Spec):
    """The manager of a hierarchical crew (with a chat model it routes each task to an agent)."""

    role: str = "Crew manager"
    goal: str = "Give each task to the agent best placed to do it"


class CrewBody(_Spec):
    """The crew as written, in either dialect once normalised (types and required fields)."""

    name: str
    description: str = ""
    process: str = "sequential"
    rag: RagSpec = Field(default_factory=RagSpec)
    agents: dict[str, AgentSpec]
    tasks: list[TaskSpec]
    edges: list[tuple[str, str]] = Field(default_factory=list)
    manager: ManagerSpec = Field(default_factory=ManagerSpec)


class CrewSpec(CrewBody):
    """A validated crew, whichever dialect it was written in."""

    process: Process = "sequential"
    dialect: Literal["ragloom", "crewai"]
    source: str
    """The crew file (ragloom) or the project's config folder (CrewAI)."""
    base_dir: str
    """Folder relative knowledge sources are resolved against."""
    order: list[str] = Field(default_factory=list)
    """Task ids in execution order (declared order, moved only where a context needs it)."""
    inputs: dict[str, list[str]] = Field(default_factory=dict)
    """Placeholder name → where it is used."""
    notices: list[str] = Field(default_factory=list)

    def task(self, task_id: str) -> TaskSpec:
        """The task with this id."""
        return next(t for t in self.tasks if t.id == task_id)

    def context_of(self, task_id: str) -> list[str]:
        """Ids of the tasks whose outputs task_id receives, in execution order."""
        task = self.task(task_id)
        if task.context is not None:
            return [t for t in self.order if t in task.context]
        if self.process == "graph":
            return [a for a, b in self.edges if b == task_id]
        return self.order[: self.order.index(task_id)]


def slug(name: str, *, prefix: str = "crew") -> str:
    """A name usable as a collection or folder name: [A-Za-z0-9._-], 3+ characters."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._")
    if len(text) < 3:
        text = f"{prefix}-{text}" if text else prefix
    return text[:63].rstrip("-._")
