"""What a crew run returns: each task's output with its citations, and the crew's final output."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragloom.state import Citation, IngestionReport, TraceStep

Generator = Literal["chat", "agent", "extractive", "none", "not_run"]
"""How a task output was written: one chat call, a tool-calling agent loop, the offline extractive
generator over the agent's knowledge, no generator (offline without knowledge) or not at all."""


class TaskOutput(BaseModel):
    """One task's output: text with `[n]` markers that resolve to its own citations."""

    task: str
    agent: str
    role: str
    description: str
    text: str
    citations: list[Citation] = Field(default_factory=list)
    generator: Generator
    label: str = ""
    """How the output was made, for a reader (e.g. `offline: extractive answer ...`)."""
    best_effort: bool = False
    notes: list[str] = Field(default_factory=list)
    output_file: str | None = None
    """Where the output was written (under the crew's output directory)."""


class CrewResult(BaseModel):
    """The crew's run: task outputs in execution order, the final output and its citations."""

    crew: str
    process: str
    tasks: list[TaskOutput] = Field(default_factory=list)
    final_output: str = ""
    citations: list[Citation] = Field(default_factory=list)
    """What the `[n]` markers of final_output resolve to (the final task's citations)."""
    ingestion: list[IngestionReport] = Field(default_factory=list)
    """The ingestion of the crew's collections when it was created."""
    notices: list[str] = Field(default_factory=list)
    trace: list[TraceStep] = Field(default_factory=list)
    best_effort: bool = False
    thread_id: str | None = None

    def output(self, task: str) -> TaskOutput:
        """The output of a task by id."""
        return next(t for t in self.tasks if t.task == task)
