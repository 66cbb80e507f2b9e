"""Chat models by name: `none` (offline paths) or an OpenAI-compatible endpoint."""

from __future__ import annotations

import functools
import json
import os
import re
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload
from urllib.parse import urlparse

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from ragloom.errors import ChatUnavailableError, ConfigError, RagloomError, UnknownNameError
from ragloom.extras import require
from ragloom.settings import ChatSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

PROVIDERS = ("none", "openai")
Reply = TypeVar("Reply", bound=BaseModel)
_TRUNCATED_REPLIES = frozenset({"LengthFinishReasonError", "ContentFilterFinishReasonError"})
"""openai's errors for a structured reply cut at max_tokens or withheld by a content filter."""
TIMEOUTS_KEY = "ragloom:timeouts"
"""Chat-model metadata entry: stage → its own time-out in seconds (see ChatSettings.timeouts)."""
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def is_loopback(base_url: str | None) -> bool:
    """True when base_url points at this machine."""
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    return host in _LOOPBACK_HOSTS or host.startswith("127.")


def _api_key(settings: ChatSettings) -> str:
    """Key from the configured env var, or `local` for a loopback endpoint without one."""
    key = os.environ.get(settings.api_key_env, "")
    if key:
        return key
    if is_loopback(settings.base_url):
        return "local"
    raise ConfigError(
        f"chat provider 'openai' needs an API key in ${settings.api_key_env}",
        where="settings.chat",
        hint=f"export {settings.api_key_env}=... or point chat.base_url at a local server",
    )


@functools.lru_cache(maxsize=8)
def _build_openai(settings_json: str, api_key: str) -> BaseChatModel:
    """Construct the ChatOpenAI client once per (settings, key)."""
    chat_openai = require("langchain_openai", "chat provider 'openai'").ChatOpenAI
    settings = ChatSettings.model_validate_json(settings_json)
    own = {stage: float(s) for stage, s in settings.timeouts.model_dump().items() if s is not None}
    return chat_openai(
        base_url=settings.base_url,
        model=settings.model,
        api_key=api_key,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        timeout=settings.timeout_s,
        max_retries=settings.max_retries,
        metadata={TIMEOUTS_KEY: own},
    )


def get_chat_model(settings: ChatSettings) -> BaseChatModel | None:
    """Return the configured chat model (cached per settings), or None for provider `none`."""
    match settings.provider:
        case "none":
            return None
        case "openai":
            return _build_openai(settings.model_dump_json(), _api_key(settings))
        case _:
            raise UnknownNameError("chat provider", settings.provider, PROVIDERS)


def map_chat_error(exc: Exception, stage: str | None = None) -> RagloomError | None:
    """Map a chat client's failure to ragloom's: rejected credentials → ConfigError; time-outs,
    connection, rate-limit and server errors → ChatUnavailableError; anything else → None."""
    from langchain_core import exceptions as lc

    name = type(exc).__name__
    if isinstance(exc, (lc.ModelAuthenticationError, lc.ModelPermissionDeniedError)):
        return ConfigError(f"the chat model rejected the credentials ({name})", where="settings.chat",
                           hint="check chat.api_key_env and the key it names")
    if isinstance(exc, (lc.ModelConnectionError, lc.ModelTimeoutError, lc.ModelRateLimitError,
                        lc.ModelAPIError, OSError, TimeoutError)):
        setting = f"chat.timeouts.{stage}" if stage else "chat.timeout_s"
        return ChatUnavailableError(f"the chat model did not answer: {name}: {exc}".splitlines()[0],
                                    where="settings.chat",
                                    hint=f"check chat.base_url and that the server runs, or raise "
                                         f"{setting}")
    return None


def _stage_timeout(chat: BaseChatModel, stage: str | None) -> float | None:
    """The time-out of a stage that has its own (models built by get_chat_model), else None."""
    own = (getattr(chat, "metadata", None) or {}).get(TIMEOUTS_KEY) or {}
    return own.get(stage) if stage else None


def complete(chat: BaseChatModel, system: str, user: str, *, stage: str) -> str:
    """Send one system + user turn and return the reply text (reasoning blocks removed).

    `stage` (transform, rerank, generate, ...) picks that stage's time-out from
    `chat.timeouts`. Raises ChatUnavailableError on time-outs, connection, rate-limit and server
    errors, and ConfigError when the endpoint rejects the credentials.
    """
    messages = [SystemMessage(content=system), HumanMessage(content=user)]
    timeout = _stage_timeout(chat, stage)
    try:
        reply = chat.invoke(messages) if timeout is None else chat.invoke(messages, timeout=timeout)
    except Exception as exc:
        mapped = map_chat_error(exc, stage)
        if mapped is None:
            raise
        raise mapped from exc
    return message_text(reply.content)


def message_text(content: object) -> str:
    """A message's text: string parts joined, reasoning blocks removed."""
    if isinstance(content, list):
        content = "".join(
            part if isinstance(part, str) else str(part.get("text", "")) for part in content
        )
    return _THINK.sub("", str(content)).strip()


def _json_schema_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI `response_format` that constrains a reply to the schema."""
    return {"type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()}}


_JSON_OPENERS: dict[type | None, str] = {None: "{[", dict: "{", list: "["}


@overload
def parse_json_reply(text: str, kind: type[dict]) -> dict[str, Any] | None: ...
@overload
def parse_json_reply(text: str, kind: type[list]) -> list[Any] | None: ...
@overload
def parse_json_reply(text: str, kind: None = None) -> dict[str, Any] | list[Any] | None: ...
def parse_json_reply(text: str, kind: type[dict] | type[list] | None = None) -> Any:
    """The first JSON object or list (only that `kind` when given) in a model reply; None if none.

    Code fences, prose around the JSON and a reply cut off mid-JSON are tolerated: a complete
    value is decoded where it starts, else langchain-core's `parse_json_markdown` closes a
    truncated one. The one parser of JSON in chat replies: nodes, judges and crews use it.
    """
    from langchain_core.utils.json import parse_json_markdown

    text = text or ""
    starts = [i for i, ch in enumerate(text) if ch in _JSON_OPENERS[kind]]
    decoder = json.JSONDecoder()
    for start in starts:
        try:
            data, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(data, kind or (dict, list)):
            return data
    for candidate in (text, *(text[i:] for i in starts[:1])):
        try:
            data = parse_json_markdown(candidate)
        except ValueError:
            continue
        if isinstance(data, kind or (dict, list)):
            return data
    return None


def parse_json_list_reply(text: str) -> list[Any] | None:
    """The first JSON list in a model reply, or the first list value of its first JSON object."""
    data = parse_json_reply(text)
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), None)
    return data if isinstance(data, list) else None


def complete_structured(chat: BaseChatModel, system: str, user: str,
                        schema: type[Reply], *, stage: str) -> Reply | None:
    """One call whose reply is parsed into `schema`; None when the reply is unusable.

    Uses the model's JSON-schema structured output when it has one (constrained decoding on
    OpenAI-compatible servers), else parses the reply text tolerantly (`parse_json_reply`: fenced,
    surrounded or partial JSON). A stage with its own time-out (`chat.timeouts`) sends the same
    constraint as a request option, since a structured-output chain cannot carry one. Raises like
    `complete` when the model is unavailable.
    """
    messages = [SystemMessage(content=system), HumanMessage(content=user)]
    timeout = _stage_timeout(chat, stage)
    structured = None
    if timeout is None:
        try:
            structured = chat.with_structured_output(schema, method="json_schema",
                                                     include_raw=True)
        except NotImplementedError:
            structured = None
    try:
        if timeout is not None:
            text = message_text(chat.invoke(messages, timeout=timeout,
                                            response_format=_json_schema_format(schema)).content)
        elif structured is None:
            text = message_text(chat.invoke(messages).content)
        else:
            # include_raw=True: always a dict of "raw", "parsed" and "parsing_error"
            result = cast(dict[str, Any], structured.invoke(messages))
            if isinstance(result.get("parsed"), schema):
                return result["parsed"]
            text = message_text(getattr(result.get("raw"), "content", ""))
    except Exception as exc:
        if type(exc).__name__ in _TRUNCATED_REPLIES:
            return None  # cut at max_tokens or filtered: no usable JSON
        mapped = map_chat_error(exc, stage)
        if mapped is None:
            raise
        raise mapped from exc
    try:
        return schema.model_validate(parse_json_reply(text, dict))
    except ValidationError:
        return None
