"""Scripted fake chat models for routing and parsing tests (never for a quality claim)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Reply = str | Callable[[str], str]


class ScriptedRoleChat(BaseChatModel):
    """A scripted fake: replies by role, the role found by a phrase of the system prompt.

    `script` maps a phrase of a system prompt to a reply (a string, a callable of the user turn,
    or a list consumed one reply per call, the last repeated). Every call is recorded in `calls`
    as (role phrase, user turn). A role without a script raises, so a test sees unexpected calls.
    """

    script: dict[str, Any] = Field(default_factory=dict)
    calls: list[tuple[str, str]] = Field(default_factory=list)
    fail_with: type[BaseException] | None = None

    @property
    def _llm_type(self) -> str:
        return "scripted-role-fake"

    def _generate(self, messages: list[BaseMessage], stop: Sequence[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        system = next((str(m.content) for m in messages if m.type == "system"), "")
        user = next((str(m.content) for m in reversed(messages) if m.type == "human"), "")
        role = next((phrase for phrase in self.script if phrase in system), None)
        self.calls.append((role or system[:60], user))
        if self.fail_with is not None:
            raise self.fail_with("scripted failure")
        if role is None:
            raise AssertionError(f"no scripted reply for the system prompt {system[:80]!r}")
        reply = self.script[role]
        if isinstance(reply, list):
            reply = reply.pop(0) if len(reply) > 1 else reply[0]
        text = reply(user) if callable(reply) else reply
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def roles(self) -> list[str]:
        """The role phrase of every call, in order."""
        return [role for role, _ in self.calls]


def ungrounded_answer() -> Any:
    """A fixed best-effort RagAnswer whose groundedness verdict is `ungrounded` (CLI warnings)."""
    from ragloom.state import Citation, RagAnswer, Verdict

    return RagAnswer(
        question="q", text="The Lumen Ultra costs EUR 999 [1].", best_effort=True,
        citations=[Citation(marker=1, chunk_id="kb/models.csv#row=1::0::x", source_id="kb/models.csv",
                            snippet="model: Lumen Max", score=0.5, score_origin="convex", start=0,
                            end=16)],
        verdicts=[Verdict(stage="groundedness", verdict="ungrounded", score=0.0,
                          reason="0/1 claims supported by their cited passages")])
