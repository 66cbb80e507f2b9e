"""One constrained chat call for a node that has an offline fallback (classifiers, screens)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import StageClock, log_once
from ragloom.providers.chat import complete_structured

Reply = TypeVar("Reply", bound=BaseModel)


def structured_or_fallback(deps: RagDeps, clock: StageClock, update: dict[str, Any], *,
                           system: str, user: str, schema: type[Reply],
                           fallback: str, stage: str) -> Reply | None:
    """The chat model's structured reply, or None with `fallback=...` traced: no chat model
    (logged once), the model unavailable (the update marked best-effort) or an unusable reply."""
    if deps.chat is None:
        log_once(f"{clock.stage}.no-chat", f"no chat model: {clock.stage} uses the {fallback}")
        clock.note(fallback=f"{fallback}: the llm mode needs a chat model")
        return None
    try:
        reply = complete_structured(deps.chat, system, user, schema, stage=stage)
    except ChatUnavailableError as exc:
        clock.note(fallback=f"{fallback}: {exc.what}")
        update["best_effort"] = True
        return None
    if reply is None:
        clock.note(fallback=f"{fallback}: no usable reply from the model")
    return reply
