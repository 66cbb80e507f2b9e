"""A scripted fake chat model for tool-calling agent loops (never for a quality claim)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


def tool_call(name: str, call_id: str, **args: Any) -> AIMessage:
    """A scripted model turn that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


Turn = AIMessage | Callable[[list[BaseMessage]], AIMessage]


class ScriptedToolChat(BaseChatModel):
    """A scripted fake: returns `replies` in order (tool calls included), the last one repeated;
    a reply may be a callable of the messages received.

    `bind_tools` records the tool names and returns the model itself; every call's messages are
    kept in `calls`, so a test can read what the agent loop sent back (tool results included).
    """

    replies: list[Any] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolChat:
        self.bound = [getattr(t, "name", str(t)) for t in tools]
        return self

    def _generate(self, messages: list[BaseMessage], stop: Sequence[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        reply: Turn = self.replies[min(len(self.calls), len(self.replies)) - 1]
        message = reply(list(messages)) if callable(reply) else reply.model_copy()
        return ChatResult(generations=[ChatGeneration(message=message)])
