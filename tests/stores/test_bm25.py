"""Bm25Index: stemming, scores, filters, atomic persistence, corrupt data, revision."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragloom.errors import ConfigError
from ragloom.state import Chunk
from ragloom.stores import bm25 as bm25_module
from ragloom.stores.bm25 import Bm25Index, ids_revision

TEXTS = [
    "The dog runs across the green field",
    "A cat sleeps on the warm windowsill",
    "Runners were running a marathon in the rain",
    "Quantum computing uses qubits and superposition",
    "The field of quantum physics studies particles",
]


def chunk(i: int, text: str, **metadata: object) -> Chunk:
    """A chunk of source `s<i % 2>` with the given text."""
    return Chunk(
        id=f"d{i}::0::{i:04d}",
        source_id=f"s{i % 2}",
        doc_id=f"d{i}",
        text=text,
        start=0,
        end=len(text),
        metadata={"n": i, **metadata},
    )


@pytest.fixture
def corpus() -> list[Chunk]:
    return [chunk(i, text, tags=["a", "b"]) for i, text in enumerate(TEXTS)]


@pytest.fixture
def index(corpus: list[Chunk], tmp_path: Path) -> Bm25Index:
    return Bm25Index.build(corpus, tmp_path / "bm25" / "col")


def test_stemming_matches_inflections(index: Bm25Index, corpus: list[Chunk]) -> None:
    hits = [r.chunk.id for r in index.search("running", k=5)]
    assert set(hits) == {corpus[0].id, corpus[2].id}


def test_scores_are_positive_descending_and_marked(index: Bm25Index) -> None:
    results = index.search("quantum field", k=10)
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    assert {r.score_origin for r in results} == {"bm25"}
    assert results[0].chunk.doc_id == "d4"  # the only chunk with both terms
    assert len(results) == 3  # only chunks that contain a query term


def test_k_is_capped_and_degenerate_queries_return_nothing(index: Bm25Index) -> None:
    assert len(index.search("the dog cat quantum field running rain", k=1000)) == 5
    assert len(index.search("quantum", k=1)) == 1
    assert index.search("", k=5) == []
    assert index.search("the a of", k=5) == []  # stopwords only
    assert index.search("zyzzyva", k=5) == []
    assert index.search("dog", k=0) == []


def test_empty_corpus(tmp_path: Path) -> None:
    empty = Bm25Index.build([], tmp_path / "empty")
    assert empty.search("dog", k=5) == []
    assert len(empty) == 0
    assert empty.revision == ids_revision([])
    assert Bm25Index.load(tmp_path / "empty") is not None


def test_filters_restrict_results(index: Bm25Index, corpus: list[Chunk]) -> None:
    hits = index.search("quantum field", k=10, where={"source_id": "s0"})
    assert [r.chunk.id for r in hits] == [corpus[4].id, corpus[0].id]
    assert (
        index.search("quantum field", k=10, where={"n": {"$in": [3]}})[0].chunk.id == corpus[3].id
    )
    assert index.search("quantum", k=10, where={"n": {"$gt": 10}}) == []
    with pytest.raises(ConfigError, match=r"\$like"):
        index.search("quantum", k=10, where={"n": {"$like": 3}})


def test_round_trips_chunks_through_disk(
    index: Bm25Index, corpus: list[Chunk], tmp_path: Path
) -> None:
    loaded = Bm25Index.load(tmp_path / "bm25" / "col")
    assert loaded is not None
    assert loaded.ids == [c.id for c in corpus]
    assert loaded.revision == index.revision
    hit = loaded.search("superposition", k=1)[0]
    assert hit.chunk == corpus[3]
    assert hit.score == pytest.approx(index.search("superposition", k=1)[0].score)


def test_lookup_returns_indexed_chunks_by_id(index: Bm25Index, corpus: list[Chunk]) -> None:
    found = index.lookup([corpus[1].id, "no-such-id", corpus[0].id])
    assert found == {corpus[0].id: corpus[0], corpus[1].id: corpus[1]}


def test_revision_is_order_independent(index: Bm25Index, corpus: list[Chunk]) -> None:
    ids = [c.id for c in corpus]
    assert index.revision == ids_revision(ids) == ids_revision(reversed(ids))
    assert ids_revision(ids[:-1]) != index.revision


def test_rebuild_replaces(index: Bm25Index, corpus: list[Chunk], tmp_path: Path) -> None:
    directory = tmp_path / "bm25" / "col"
    rebuilt = Bm25Index.build(corpus[:2], directory)
    assert rebuilt.ids == [c.id for c in corpus[:2]]
    assert Bm25Index.load(directory).revision == ids_revision(c.id for c in corpus[:2])  # type: ignore[union-attr]
    assert sorted(p.name for p in directory.parent.iterdir()) == ["col"]


def test_failed_build_leaves_old_index_intact(
    index: Bm25Index, corpus: list[Chunk], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(chunks: list[Chunk], directory: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(bm25_module, "_write_meta", crash)
    directory = tmp_path / "bm25" / "col"
    with pytest.raises(OSError, match="disk full"):
        Bm25Index.build(corpus[:1], directory)
    loaded = Bm25Index.load(directory)
    assert loaded is not None and loaded.revision == index.revision
    assert sorted(p.name for p in directory.parent.iterdir()) == ["col"]


def test_load_missing_is_none(tmp_path: Path) -> None:
    assert Bm25Index.load(tmp_path / "nothing") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "meta.json").write_text("{not json"),
        lambda d: (d / "meta.json").write_text('{"format": 99}'),
        lambda d: (d / "chunks.jsonl").write_text('{"id": "x"}\n'),
        lambda d: (d / "chunks.jsonl").unlink(),
        lambda d: [p.write_bytes(b"garbage") for p in (d / "model").iterdir()],
        lambda d: [p.unlink() for p in (d / "model").iterdir()],
    ],
    ids=["meta-json", "meta-format", "chunks", "chunks-missing", "model-garbage", "model-missing"],
)
def test_load_corrupt_is_none(index: Bm25Index, tmp_path: Path, damage: object) -> None:
    directory = tmp_path / "bm25" / "col"
    damage(directory)  # type: ignore[operator]
    assert Bm25Index.load(directory) is None


def test_filter_masks_are_cached(index: Bm25Index) -> None:
    where = {"source_id": "s1"}
    index.search("cat", k=3, where=where)
    index.search("cat", k=3, where=dict(where))
    assert len(index._masks) == 1
