"""Boundaries that run graphs: the runner's circuit breaker, build_graph's settings, the lock."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import pytest

from ragloom import resources
from ragloom.errors import StoreError
from ragloom.graphs import ingest as ingest_graphs
from ragloom.graphs import routing
from ragloom.ingestion.chunkers import get_chunker
from ragloom.nodes.ingest import IngestDeps
from ragloom.registry import build_graph
from ragloom.runner import ask, ingest
from ragloom.settings import load_settings
from ragloom.stores.lock import collection_lock


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small document in a fresh collection."""
    root = tmp_path_factory.mktemp("bounds")
    (root / "docs").mkdir()
    (root / "docs" / "pump.md").write_text("# Pump\n\nThe P-40 pump moves 40 litres a minute.\n",
                                           encoding="utf-8")
    assert not ingest([str(root / "docs")], collection="bounds", data_dir=root / "data").failed
    return root / "data"


def test_ask_turns_a_tripped_recursion_limit_into_a_best_effort_answer(
        kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routing, "out_of_steps", lambda state: False)
    monkeypatch.setattr(routing, "budget_left", lambda state: True)
    monkeypatch.setattr(routing, "last_verdict",
                        lambda state, stage: {"grade": "incorrect", "input_guard": "ok"}.get(stage))
    result = ask("How much does the P-40 pump move?", profile="corrective", collection="bounds",
                 data_dir=kb)
    assert result.best_effort
    assert [s.stage for s in result.trace] == ["circuit_breaker"]
    assert "Recursion limit" in result.trace[0].detail["error"]


def test_build_graph_applies_profile_and_overrides_on_top_of_given_settings(kb: Path) -> None:
    base = load_settings("balanced", data_dir=kb, collection="bounds")
    graph = build_graph("fast", settings=base, retrieval={"candidate_k": 7})
    answer = graph.invoke({"question": "How much does the P-40 pump move?"})["answer"]
    assert answer.profile == "fast"
    retrieve = next(s for s in answer.trace if s.stage == "retrieve")
    assert retrieve.detail["mode"] == "vector" and retrieve.detail["candidate_k"] == 7
    assert "40 litres" in answer.text


def test_the_collection_lock_excludes_a_second_holder(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "c.lock"
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with collection_lock(path):
            entered.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    assert entered.wait(5)
    try:
        with pytest.raises(StoreError, match="another ingest holds this collection"):
            with collection_lock(path, timeout_s=0.2):
                pass
    finally:
        release.set()
        holder.join()
    with collection_lock(path, timeout_s=0.2):  # free again once released
        pass


def test_the_served_ingest_graph_runs_under_the_collection_lock(
        kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_graphs, "collection_lock",
                        functools.partial(collection_lock, timeout_s=0.2))
    settings = load_settings("balanced", data_dir=kb, collection="bounds")
    embedder = resources.embedder(settings)
    deps = IngestDeps(settings=settings, index=resources.document_index(settings),
                      embedder=embedder, chunker=get_chunker(settings.chunker, embedder=embedder),
                      paths=resources.data_paths(settings))
    graph = ingest_graphs.build_locked_ingest_graph(deps).compile()
    docs = tmp_path / "more"
    docs.mkdir()
    (docs / "valve.md").write_text("# Valve\n\nThe V-2 valve closes in 3 seconds.\n",
                                   encoding="utf-8")
    with collection_lock(deps.paths.lock_file("bounds")):
        with pytest.raises(StoreError, match="another ingest holds this collection"):
            graph.invoke({"sources": [str(docs)]})
    report = graph.invoke({"sources": [str(docs)]})["report"]
    assert report.count("ingested") == 1
