"""Ingest progress per source, the ingest summary's extra fields, and `ragloom ask --stream`.

The warning test replays a scripted stream (ScriptedStream: fixed events, no model): it checks
what the CLI prints, not an answer's quality.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragloom import resources
from ragloom import runner as runner_module
from ragloom.cli import app
from ragloom.nodes.ingest import embedding as embed_node
from ragloom.runner import StreamEvent, ingest
from ragloom.settings import load_settings
from ragloom.state import RagAnswer
from tests.fakes import ungrounded_answer

cli = CliRunner()
QUESTION = "Which port does lumend serve on?"


def _sources(root: Path, n: int) -> Path:
    folder = root / "kb"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"doc{i}.md").write_text(f"# Doc {i}\n\nThe unit U-{i} weighs {i + 3} kilos.\n")
    return folder


def test_progress_advances_source_by_source_between_embeddings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    settings = load_settings(data_dir=data, collection="progress")
    embedder = resources.embedder(settings)
    events: list[Any] = []
    real = type(embedder).embed_array

    def spy(self: Any, texts: list[str]) -> Any:
        events.append(("embed", len(texts)))
        return real(self, texts)

    report_done = embed_node.report_done

    def reported(source_ids: list[str]) -> None:
        events.append(("done", [Path(s).name for s in source_ids]))
        report_done(source_ids)

    monkeypatch.setattr(type(embedder), "embed_array", spy)
    monkeypatch.setattr(embed_node, "report_done", reported)
    monkeypatch.setattr(embed_node, "EMBED_GROUP_TEXTS", 1)  # one source per embed call
    progress: list[tuple[int, int]] = []
    report = ingest([str(_sources(tmp_path, 3))], settings=settings,
                    progress=lambda done, total: progress.append((done, total)))
    assert report.count("ingested") == 3
    # all three sources sit in one batch of 64, yet each is reported done after its embeddings
    node_side = [e for e in events if e != ("done", [])]  # load settles none of them
    assert node_side == [("embed", 1), ("done", ["doc0.md"]), ("embed", 1), ("done", ["doc1.md"]),
                         ("embed", 1), ("done", ["doc2.md"])]
    assert progress == [(0, 3), (1, 3), (2, 3), (3, 3), (3, 3)]


def test_tiny_sources_share_an_embed_call_and_still_report_one_by_one(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    report = ingest([str(_sources(tmp_path, 4))], collection="grouped", data_dir=tmp_path / "d",
                    progress=lambda done, total: calls.append((done, total)))
    assert report.count("ingested") == 4
    assert [done for done, _ in calls] == [0, 1, 2, 3, 4, 4]


def test_ingest_summary_lists_skipped_files_and_chunks_written(tmp_path: Path) -> None:
    folder = _sources(tmp_path, 1)
    (folder / "photo.bin").write_bytes(b"\x00\x01")
    result = cli.invoke(app, ["ingest", str(folder), "-c", "summary", "--data-dir",
                              str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    printed = result.stdout.replace("\n", "")  # long temporary paths wrap mid-word
    assert "skipped 1 file(s)" in printed and "photo.bin" in printed
    assert "unsupported" in result.stdout and "1 chunks written" in result.stdout


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection `portkb` with one source."""
    root = tmp_path_factory.mktemp("askstream")
    (root / "port.md").write_text("# Ports\n\nThe lumend daemon serves on port 8642.\n")
    assert not ingest([str(root / "port.md")], collection="portkb", data_dir=root / "data").failed
    return root / "data"


def _sources_block(output: str) -> str:
    return output[output.index("Sources"):]


def test_ask_stream_prints_the_text_then_the_same_sources_as_ask(kb: Path) -> None:
    args = ["ask", QUESTION, "-c", "portkb", "--data-dir", str(kb)]
    plain = cli.invoke(app, args)  # CliRunner is no terminal: not streamed by default
    streamed = cli.invoke(app, [*args, "--stream"])
    assert plain.exit_code == 0 and streamed.exit_code == 0, streamed.output
    assert "8642" in streamed.stdout.split("Sources")[0]
    assert _sources_block(streamed.stdout) == _sources_block(plain.stdout)
    as_json = cli.invoke(app, [*args, "--stream", "--json"])  # --json never streams
    assert json.loads(as_json.stdout)["citations"][0]["marker"] == 1


class ScriptedStream:
    """Replays fixed StreamEvents in place of `runner.stream` (no graph, no model)."""

    def __init__(self, answer: RagAnswer) -> None:
        self.answer = answer

    def __call__(self, *args: object, **kwargs: object) -> Iterator[StreamEvent]:
        yield StreamEvent(kind="stage", stage="retrieve")
        yield StreamEvent(kind="text", stage="generate", text="The Lumen Ultra ")
        yield StreamEvent(kind="text", stage="generate", text="costs EUR 999 [1].")
        yield StreamEvent(kind="answer", answer=self.answer)


def test_a_streamed_ungrounded_answer_still_prints_its_warning(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ungrounded = ungrounded_answer()
    monkeypatch.setattr(runner_module, "stream", ScriptedStream(ungrounded))
    result = cli.invoke(app, ["ask", "q", "--stream", "-c", "portkb", "--data-dir", str(kb)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("The Lumen Ultra costs EUR 999 [1].")
    warning = out.index("warning: this answer is not supported by the passages it cites")
    assert out.index("EUR 999") < warning < out.index("Sources") < out.index("[1] kb/models.csv")
    assert "checked answer" not in out  # the streamed text was the final text


def test_a_revised_answer_is_printed_after_the_stream(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revised = RagAnswer(question="q", text="The Lumen Ultra costs EUR 899 [1].")
    monkeypatch.setattr(runner_module, "stream", ScriptedStream(revised))
    result = cli.invoke(app, ["ask", "q", "--stream", "-c", "portkb", "--data-dir", str(kb)])
    assert result.exit_code == 0, result.output
    assert result.stdout.index("EUR 999") < result.stdout.index("checked answer:")
    assert result.stdout.index("checked answer:") < result.stdout.index("EUR 899")
