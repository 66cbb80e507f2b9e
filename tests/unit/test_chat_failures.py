"""complete() against a scripted OpenAI-compatible HTTP stub on 127.0.0.1: per-stage time-outs,
and how time-outs, refused connections, server errors and rejected keys map to ragloom errors.

The stub (ScriptedChatServer) replays canned HTTP replies; it checks protocol handling only.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import BaseModel

from ragloom.errors import ChatUnavailableError, ConfigError
from ragloom.providers.chat import complete, complete_structured, get_chat_model
from ragloom.settings import ChatSettings
from tests.conftest import free_port

REPLY = {"id": "x", "object": "chat.completion", "created": 0, "model": "local",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                      "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class ScriptedChatServer(ThreadingHTTPServer):
    """Answers every POST with `status` after `delay_s` seconds."""

    daemon_threads = True

    def __init__(self, status: int = 200, delay_s: float = 0.0) -> None:
        self.status, self.delay_s = status, delay_s
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedChatServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(self.server.delay_s)
        body = json.dumps(REPLY if self.server.status == 200 else
                          {"error": {"message": "scripted failure"}}).encode()
        try:
            self.send_response(self.server.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client gave up first
            pass

    def log_message(self, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start ScriptedChatServers; yields a factory returning each one's /v1 URL."""
    servers: list[ScriptedChatServer] = []

    def start(status: int = 200, delay_s: float = 0.0) -> str:
        server = ScriptedChatServer(status, delay_s)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def chat_for(base_url: str, **fields: Any) -> Any:
    settings = ChatSettings(provider="openai", base_url=base_url, api_key_env="RAGLOOM_TEST_KEY",
                            **fields)
    return get_chat_model(settings)


def test_a_stage_uses_its_own_timeout_and_others_the_default(serve: Any) -> None:
    chat = chat_for(serve(delay_s=1.5), timeout_s=30, timeouts={"rerank": 0.3})
    with pytest.raises(ChatUnavailableError, match="chat.timeouts.rerank"):
        complete(chat, "system", "user", stage="rerank")
    assert complete(chat, "system", "user", stage="transform") == "ok"  # 30 s default suffices


def test_a_structured_stage_uses_its_own_timeout(serve: Any) -> None:
    class Verdict(BaseModel):
        verdict: str

    chat = chat_for(serve(delay_s=1.5), timeout_s=30, timeouts={"grade": 0.3})
    with pytest.raises(ChatUnavailableError, match="chat.timeouts.grade"):
        complete_structured(chat, "system", "user", Verdict, stage="grade")


def test_refused_connection_and_server_errors_are_unavailable(serve: Any) -> None:
    with pytest.raises(ChatUnavailableError, match="did not answer"):
        complete(chat_for(f"http://127.0.0.1:{free_port()}/v1"), "s", "u", stage="generate")
    with pytest.raises(ChatUnavailableError, match="did not answer"):
        complete(chat_for(serve(status=500)), "s", "u", stage="generate")


def test_rejected_credentials_are_a_config_error_naming_the_setting(serve: Any) -> None:
    with pytest.raises(ConfigError, match="rejected the credentials.*chat.api_key_env"):
        complete(chat_for(serve(status=401)), "s", "u", stage="generate")
