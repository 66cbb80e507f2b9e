"""Streaming and async faces of the runner over a small collection.

The chat model in the token test is a scripted fake (GenericFakeChatModel replaying one reply in
chunks): it checks that tokens are relayed, not what they say.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from ragloom import resources, runner
from ragloom.registry import compile_profile
from ragloom.runner import aask, aretrieve, ask, astream, ingest, stream
from ragloom.settings import load_settings
from ragloom.state import RunInput

QUESTION = "How much does the P-40 pump move?"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two small documents in a fresh collection."""
    root = tmp_path_factory.mktemp("stream")
    (root / "docs").mkdir()
    (root / "docs" / "pump.md").write_text(
        "# Pump\n\nThe P-40 pump moves 40 litres a minute. It runs on 24 volts.\n",
        encoding="utf-8")
    (root / "docs" / "valve.md").write_text("# Valve\n\nThe V-2 valve closes in 3 seconds.\n",
                                            encoding="utf-8")
    assert not ingest([str(root / "docs")], collection="stream", data_dir=root / "data").failed
    return root / "data"


def test_stream_yields_stages_text_then_the_answer_ask_gives(kb: Path) -> None:
    events = list(stream(QUESTION, collection="stream", data_dir=kb))
    kinds = [e.kind for e in events]
    assert kinds[-1] == "answer" and kinds.count("answer") == 1
    stages = [e.stage for e in events if e.kind == "stage"]
    assert stages[0] == "guard" and {"retrieve", "generate", "answer"} <= set(stages)
    text = "".join(e.text for e in events if e.kind == "text")
    final = events[-1].answer
    assert final is not None and text.strip() == final.text
    assert final.text == ask(QUESTION, collection="stream", data_dir=kb).text


def test_stream_relays_chat_model_tokens(kb: Path) -> None:
    reply = AIMessage(content="The P-40 moves 40 litres a minute [1].")
    fake = GenericFakeChatModel(messages=iter([reply]))
    settings = load_settings("balanced", data_dir=kb, collection="stream")
    graph = compile_profile(dataclasses.replace(resources.rag_deps(settings), chat=fake))
    events = list(runner.stream_run(runner.Run(graph=graph, input=RunInput(question=QUESTION))))
    tokens = [e.text for e in events if e.kind == "text"]
    assert len(tokens) > 1  # streamed in pieces, not one sentence event
    assert "".join(tokens) == reply.content
    assert events[-1].answer is not None and "40 litres" in events[-1].answer.text


def test_async_faces_match_the_sync_ones(kb: Path) -> None:
    async def run() -> tuple:
        answer = await aask(QUESTION, collection="stream", data_dir=kb)
        passages = await aretrieve(QUESTION, collection="stream", data_dir=kb, top_n=2)
        events = [e async for e in astream(QUESTION, collection="stream", data_dir=kb,
                                           profile="corrective")]
        return answer, passages, events

    answer, passages, events = asyncio.run(run())
    assert answer.text == ask(QUESTION, collection="stream", data_dir=kb).text
    assert passages.text == "" and 1 <= len(passages.citations) <= 2
    assert events[-1].kind == "answer" and events[-1].answer.profile == "corrective"
    assert "grade" in [e.stage for e in events if e.kind == "stage"]
