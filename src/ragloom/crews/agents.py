"""Agents doing tasks: a tool-calling loop, one chat call, or the offline extractive answer.

- An agent with tools and a chat model runs LangChain's agent loop (`create_agent`): its model
  calls are bounded by `max_iter` (`ModelCallLimitMiddleware`), the loop by a recursion limit;
  hitting either gives a best-effort output. Its `rag_search` calls number the passages they find
  into the task's block, so their markers resolve like the injected knowledge's.
- An agent without tools makes one chat call (`providers.chat.complete`).
- Without a chat model (or when it is unavailable) an agent with knowledge answers extractively
  from its block, labelled as such; one without knowledge says plainly it needs a chat model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel

from ragloom.crews.knowledge import Block
from ragloom.crews.placeholders import interpolate
from ragloom.crews.result import Generator
from ragloom.crews.schema import AgentSpec, ManagerSpec
from ragloom.errors import ChatUnavailableError
from ragloom.nodes.assemble import render_context
from ragloom.nodes.generate import IDK, extractive_answer
from ragloom.nodes.trace import log_once
from ragloom.providers.chat import complete, complete_structured, map_chat_error, message_text
from ragloom.settings import RagSettings
from ragloom.state import Chunk, Citation, ScoredChunk
from ragloom.tools import SearchArgs, build_tools, format_passages

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

CITE_RULES = (
    "Use the numbered passages you are given as your knowledge. After every claim taken from a "
    "passage put its marker, like [1] or [2]; cite only passages that support the claim. Markers "
    "in the outputs of earlier tasks refer to the same numbered passages; keep them when you "
    f"reuse those claims. If the passages do not hold what the task needs, say {IDK!r}."
)
NEEDS_CHAT = ("This task needs a chat model: agent {role!r} has no knowledge to answer from "
              "offline. Configure one (chat.provider: openai with chat.base_url) and run again.")
NOTHING_FOUND = f"{IDK}: nothing relevant was found in this agent's knowledge."
OFFLINE_LABEL = "offline: extractive answer from the agent's knowledge, no chat model"
FALLBACK_LABEL = "chat model unavailable: extractive answer from the agent's knowledge"
NEEDS_CHAT_LABEL = "offline: needs a chat model"
LIMIT_PREFIX = "Model call limits exceeded"
"""How `ModelCallLimitMiddleware` words the message that ends a loop at its run limit."""
STEPS_PER_CALL = 4
"""Supersteps of one agent-loop iteration: before-model limit check, model, after-model, tools."""


BLOCK_KEY = "ragloom_crew_block"
"""`configurable` key carrying the running task's Block to its rag_search calls (not the runtime
context: graphs the tools run inside the loop would inherit it in place of their own)."""


@dataclass
class Outcome:
    """What an agent produced for a task, before markers are checked."""

    text: str
    generator: Generator
    label: str = ""
    best_effort: bool = False
    notes: list[str] = field(default_factory=list)


def system_prompt(agent: AgentSpec, inputs: dict[str, Any], knows: bool) -> str:
    """The agent's persona (role, backstory, goal), with the citation rules when it has passages."""
    parts = [f"You are {interpolate(agent.role, inputs)}."]
    if agent.backstory:
        parts.append(interpolate(agent.backstory, inputs).strip())
    if agent.goal:
        parts.append(f"Your goal: {interpolate(agent.goal, inputs).strip()}")
    if knows:
        parts.append(CITE_RULES)
    return "\n".join(parts)


def task_prompt(description: str, expected: str, contexts: Sequence[tuple[str, str, str]],
                block: Block, ordering: str, tools: Sequence[str]) -> str:
    """The user turn: the task, its expected output, earlier outputs and the numbered passages."""
    parts = [f"Task: {description.strip()}"]
    if expected.strip():
        parts.append(f"Expected output: {expected.strip()}")
    if contexts:
        parts.append("Outputs of earlier tasks:\n\n" + "\n\n".join(
            f"### {task} ({role})\n{text.strip()}" for task, role, text in contexts))
    if len(block):
        parts.append("Knowledge (numbered passages):\n\n"
                     + render_context(block.passages, ordering))
    if "rag_search" in tools:
        parts.append("You may call rag_search to find more passages; cite them by their [n].")
    parts.append("Write the task's output now.")
    return "\n\n".join(parts)


def _as_scored(item: dict[str, Any]) -> ScoredChunk:
    """A rag_search artifact entry as a ranked chunk."""
    chunk_id = str(item["chunk_id"])
    chunk = Chunk(id=chunk_id, source_id=item["source_id"], doc_id=chunk_id.rsplit("::", 2)[0],
                  text=item.get("text") or item["snippet"], start=item["start"], end=item["end"],
                  metadata=item.get("metadata") or {})
    return ScoredChunk(chunk=chunk, score=item["score"], score_origin=item["score_origin"])


def marked_search(base: StructuredTool) -> StructuredTool:
    """The rag_search tool whose passages are numbered into the running task's block."""

    def rag_search(query: str, collection: str | None = None, profile: str | None = None,
                   top_n: int = 5, filters: dict[str, Any] | None = None,
                   runtime: ToolRuntime = None,  # type: ignore[assignment]  # injected
                   ) -> tuple[str, list[dict[str, Any]]]:
        """Search the knowledge base; passages are numbered into the task's block."""
        text, artifact = base.func(query=query, collection=collection,  # type: ignore[misc]
                                   profile=profile, top_n=top_n, filters=filters)
        config = getattr(runtime, "config", None) or {}
        block = (config.get("configurable") or {}).get(BLOCK_KEY)
        if not artifact or not isinstance(block, Block):
            return text, artifact
        citations, texts = [], {}
        for item in artifact:
            marker = block.add(_as_scored(item))
            fields = {k: v for k, v in item.items() if k in Citation.model_fields}
            citations.append(Citation(**{**fields, "marker": marker}))
            texts[item["chunk_id"]] = item.get("text") or item["snippet"]
        header = text.split("\n\n", 1)[0]
        return (f"{header}\n\n{format_passages(citations, texts)}",
                [c.model_dump() for c in citations])

    return StructuredTool.from_function(func=rag_search, name=base.name,
                                        description=base.description, args_schema=SearchArgs,
                                        response_format="content_and_artifact",
                                        handle_validation_error=base.handle_validation_error)


def agent_tools(agent: AgentSpec, settings: RagSettings) -> list[BaseTool]:
    """The allowed tools an agent names, bound to its knowledge's first collection and profile."""
    if not agent.tools:
        return []
    tools = {t.name: t for t in build_tools(
        data_dir=settings.data_dir, collection=agent.knowledge[0] if agent.knowledge else None,
        profile=agent.profile or settings.profile)}
    return [marked_search(tools[name])
            if name == "rag_search" else tools[name] for name in agent.tools]


def loop_limit(max_iter: int) -> int:
    """Recursion limit of an agent loop allowed max_iter model calls (plus the final answer)."""
    return STEPS_PER_CALL * (max_iter + 1) + 2


def agent_loop(agent_id: str, agent: AgentSpec, chat: BaseChatModel,
               tools: list[BaseTool]) -> Any:
    """LangChain's tool-calling agent loop for one agent, its model calls bounded by max_iter."""
    try:
        from langchain.agents import create_agent
        from langchain.agents.middleware import ModelCallLimitMiddleware
    except ImportError as exc:
        from ragloom.errors import ConfigError

        raise ConfigError(f"agent {agent_id!r} has tools: the agent loop needs langchain",
                          where=f"agents.{agent_id}.tools", hint="pip install 'ragloom[llm]'"
                          ) from exc
    return create_agent(
        chat, tools, name=f"agent-{agent_id}",
        middleware=[ModelCallLimitMiddleware(run_limit=agent.max_iter, exit_behavior="end")],
    )


def _loop_text(messages: Sequence[Any]) -> tuple[str, bool, int]:
    """The loop's answer (its last text reply), whether it hit max_iter, and its tool calls."""
    last = messages[-1] if messages else None
    limited = isinstance(last, AIMessage) and message_text(last.content).startswith(LIMIT_PREFIX)
    replies = [message_text(m.content) for m in messages
               if isinstance(m, AIMessage) and not m.tool_calls and message_text(m.content)
               and not message_text(m.content).startswith(LIMIT_PREFIX)]
    calls = sum(isinstance(m, ToolMessage) for m in messages)
    return (replies[-1] if replies else ""), limited, calls


class Performer:
    """Runs one agent's tasks with its chat model, tools and knowledge (or offline)."""

    def __init__(self, agent_id: str, agent: AgentSpec, *, chat: BaseChatModel | None,
                 settings: RagSettings, embedder: Any, loop: Any | None) -> None:
        self.agent_id = agent_id
        self.agent = agent
        self.chat = chat
        self.settings = settings
        self.embedder = embedder
        self.loop = loop
        """The agent's tool-calling loop (None: it has no tools or no chat model)."""

    def offline(self, query: str, block: Block, role: str, *,
                fallback: str | None = None) -> Outcome:
        """The extractive answer over the block, or the plain needs-a-chat-model output."""
        notes = [f"fallback=offline: {fallback}"] if fallback else []
        if not self.agent.knowledge:
            return Outcome(NEEDS_CHAT.format(role=role), "none", NEEDS_CHAT_LABEL,
                           best_effort=fallback is not None, notes=notes)
        log_once("crew.extractive", "no chat model: crew agents answer extractively")
        generate = self.settings.generate
        text = (extractive_answer(query, block.passages, generate.max_sentences,
                                  generate.max_chars, embedder=self.embedder)
                if len(block) else NOTHING_FOUND)
        return Outcome(text, "extractive", FALLBACK_LABEL if fallback else OFFLINE_LABEL,
                       best_effort=fallback is not None, notes=notes)

    def perform(self, *, system: str, prompt: str, query: str, block: Block, role: str,
                loop: Any | None) -> Outcome:
        """Do one task: the agent loop (the node's subgraph), one chat call, or offline."""
        if self.chat is None:
            return self.offline(query, block, role)
        try:
            if loop is not None:
                return self._run_loop(loop, prompt, system, block)
            return Outcome(complete(self.chat, system, prompt, stage="generate") or IDK, "chat")
        except ChatUnavailableError as exc:
            return self.offline(query, block, role, fallback=exc.what)

    def _run_loop(self, loop: Any, prompt: str, system: str, block: Block) -> Outcome:
        from langchain_core.messages import SystemMessage
        from langgraph.errors import GraphRecursionError

        limit = self.agent.max_iter
        try:
            out = loop.invoke(
                {"messages": [SystemMessage(content=system), HumanMessage(content=prompt)]},
                config={"recursion_limit": loop_limit(limit), "configurable": {BLOCK_KEY: block}})
        except GraphRecursionError:
            return Outcome(f"I could not finish this task within the agent loop's recursion "
                           f"limit ({loop_limit(limit)} steps).", "agent", best_effort=True,
                           notes=["recursion limit reached"])
        except Exception as exc:
            mapped = map_chat_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        text, limited, calls = _loop_text(out.get("messages") or [])
        notes = [f"tool calls: {calls}"]
        if limited:
            notes.append(f"max_iter reached ({limit} model calls)")
            text = text or f"I could not finish this task within {limit} model calls."
        return Outcome(text or IDK, "agent", best_effort=limited, notes=notes)


class ManagerChoice(BaseModel):
    """The manager's reply: the agent to give the task to."""

    agent: str
    reason: str = ""


MANAGER_RULES = ("Choose the one agent best placed to do the task. Reply with JSON only: "
                 '{"agent": "<agent id>", "reason": "<a few words>"}')


def choose_agent(chat: BaseChatModel, manager: ManagerSpec, agents: dict[str, AgentSpec],
                 description: str, suggested: str | None) -> ManagerChoice | None:
    """Ask the manager's chat model which agent does a task (None: no usable reply)."""
    system = f"You are {manager.role}. Your goal: {manager.goal}.\n{MANAGER_RULES}"
    roster = "\n".join(f"- {agent_id}: {a.role}" + (f" — {a.goal}" if a.goal else "")
                       for agent_id, a in agents.items())
    hint = f"\nThe crew file suggests: {suggested}" if suggested else ""
    user = f"Agents:\n{roster}\n\nTask: {description.strip()}{hint}"
    choice = complete_structured(chat, system, user, ManagerChoice, stage="classify")
    if choice is None or choice.agent.strip() not in agents:
        return None
    return choice.model_copy(update={"agent": choice.agent.strip()})
