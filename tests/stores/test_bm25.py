"""Bm25Index: stemming, scores equal to bm25s and to a full rebuild after any update, filters,
segments and tombstones, merges, atomic commits, snapshots, corrupt data."""

from __future__ import annotations

import json
import random
from pathlib import Path

import bm25s
import numpy as np
import pytest

from ragloom.errors import ConfigError
from ragloom.state import Chunk
from ragloom.stores import bm25 as bm25_module
from ragloom.stores.bm25 import (
    Bm25Index,
    CorruptIndexError,
    ids_revision,
    read_state,
    remove_unreferenced,
    tokenize_texts,
    update,
)

TEXTS = [
    "The dog runs across the green field",
    "A cat sleeps on the warm windowsill",
    "Runners were running a marathon in the rain",
    "Quantum computing uses qubits and superposition",
    "The field of quantum physics studies particles",
]
WORDS = ("quantum field dog cat rain marathon qubit particle green warm sleep run "
         "physics study window across uses").split()


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


def random_chunks(rng: random.Random, start: int, n: int) -> list[Chunk]:
    """n chunks with random bags of WORDS (ids start..start+n-1)."""
    return [chunk(i, " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))))
            for i in range(start, start + n)]


def ranking(index: Bm25Index, query: str) -> list[tuple[str, float]]:
    """(id, score) of every hit, best first."""
    return [(r.chunk.id, r.score) for r in index.search(query, k=10_000)]


def assert_same_scores(left: Bm25Index, right: Bm25Index, queries: list[str]) -> None:
    for query in queries:
        a, b = dict(ranking(left, query)), dict(ranking(right, query))
        assert a.keys() == b.keys(), query
        for cid, score in a.items():
            assert score == pytest.approx(b[cid], rel=1e-5), (query, cid)


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


def test_scores_equal_those_of_bm25s(tmp_path: Path) -> None:
    rng = random.Random(3)
    chunks = random_chunks(rng, 0, 200)
    ours = Bm25Index.build(chunks, tmp_path / "b")
    model = bm25s.BM25()
    model.index(bm25s.tokenize([c.text for c in chunks], stopwords="en",
                               stemmer=bm25_module.stemmer(), show_progress=False),
                show_progress=False)
    vocab = model.vocab_dict
    for query in ["quantum field", "dog dog cat", "rain marathon physics", "warm"]:
        ids = [vocab[t] for t in tokenize_texts([query])[0] if t in vocab]
        expected = model.get_scores_from_ids(ids)
        got = np.zeros(len(chunks), dtype=np.float32)
        for hit in ours.search(query, k=1000):
            got[int(hit.chunk.doc_id[1:])] = hit.score
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


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


def test_updates_give_the_scores_of_a_full_rebuild(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_module, "MAX_SEGMENTS", 3)
    rng = random.Random(7)
    directory = tmp_path / "inc"
    live = {c.id: c for c in random_chunks(rng, 0, 120)}
    Bm25Index.build(list(live.values()), directory)
    next_id, merges = 120, set()
    for _step in range(12):
        deleted = rng.sample(sorted(live), rng.randint(0, 6))
        edited = [chunk(int(cid.split("::")[0][1:]), "quantum rain " * rng.randint(1, 3))
                  for cid in rng.sample(sorted(set(live) - set(deleted)), 2)]
        added = random_chunks(rng, next_id, rng.randint(0, 5)) + edited
        next_id += 5
        for cid in deleted:
            del live[cid]
        live.update({c.id: c for c in added})
        result = update(directory, added, [*deleted, *(c.id for c in edited)], applied_seq=_step,
                        count=len(live), epoch="")
        merges.add(result.merged)
        incremental = Bm25Index.open(directory)
        rebuilt = Bm25Index.build(sorted(live.values(), key=lambda c: c.id), tmp_path / "full")
        assert sorted(incremental.ids) == sorted(live)
        assert_same_scores(incremental, rebuilt, ["quantum rain", "dog field", "cat warm sleep"])
    assert "deltas" in merges  # both merge policies ran during the sequence
    assert Bm25Index.open(directory).current["applied_seq"] == 11


def test_delta_merges_are_size_tiered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_module, "MAX_SEGMENTS", 4)
    monkeypatch.setattr(bm25_module, "MERGE_RATIO", 10.0)
    rng = random.Random(3)
    directory = tmp_path / "tiers"
    live = {c.id: c for c in random_chunks(rng, 0, 60)}
    Bm25Index.build(list(live.values()), directory)
    big = random_chunks(rng, 60, 40)
    live.update({c.id: c for c in big})
    update(directory, big, [], applied_seq=1, count=len(live), epoch="")
    big_segment = read_state(directory)["segments"][1]
    merged = []
    for step in range(6):  # one small edit per commit, as a change feed makes them
        edit = random_chunks(rng, 100 + step, 1)
        live.update({c.id: c for c in edit})
        merged.append(update(directory, edit, [], applied_seq=2 + step, count=len(live),
                             epoch="").merged)
    assert "deltas" in merged
    assert big_segment in read_state(directory)["segments"]  # never rewritten for small ones
    rebuilt = Bm25Index.build(sorted(live.values(), key=lambda c: c.id), tmp_path / "full")
    assert_same_scores(Bm25Index.open(directory), rebuilt, ["quantum rain", "dog field"])


def test_full_merge_when_deltas_pass_the_ratio(tmp_path: Path) -> None:
    directory = tmp_path / "m"
    rng = random.Random(1)
    Bm25Index.build(random_chunks(rng, 0, 40), directory)
    small = update(directory, random_chunks(rng, 40, 2), [], applied_seq=1, count=42, epoch="")
    assert small.merged == "none"
    big = update(directory, random_chunks(rng, 42, 20), ["d0::0::0000"], applied_seq=2, count=61,
                 epoch="")
    assert big.merged == "all"
    current = json.loads((directory / "CURRENT.json").read_text())
    assert len(current["segments"]) == 1 and current["tombstones"] == []
    assert sorted(p.name for p in directory.iterdir()) == ["CURRENT.json", current["segments"][0]]
    assert len(Bm25Index.open(directory)) == 61


def test_delete_and_readd_in_one_commit_keeps_the_new_copy(index: Bm25Index, corpus: list[Chunk],
                                                          tmp_path: Path) -> None:
    directory = tmp_path / "bm25" / "col"
    replaced = chunk(1, "zebras graze in the savanna")
    update(directory, [replaced], [corpus[1].id], applied_seq=1, count=5, epoch="")
    after = Bm25Index.open(directory)
    assert after.lookup([corpus[1].id])[corpus[1].id].text == replaced.text
    assert after.search("windowsill", k=5) == []
    update(directory, [], [corpus[1].id], applied_seq=2, count=4, epoch="")
    assert Bm25Index.open(directory).search("zebras", k=5) == []


def test_a_snapshot_is_immutable_and_reloads_reuse_segments(
    index: Bm25Index, corpus: list[Chunk], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25_module, "MERGE_RATIO", 10.0)
    directory = tmp_path / "bm25" / "col"
    before = Bm25Index.open(directory)
    scores = ranking(before, "quantum field")
    update(directory, [chunk(9, "quantum field quantum field")], [corpus[4].id], applied_seq=1,
           count=5, epoch="")
    assert ranking(before, "quantum field") == scores  # the old snapshot is untouched
    after = Bm25Index.open(directory, previous=before)
    assert after._segments[0] is before._segments[0]
    assert ranking(after, "quantum field")[0][0] == "d9::0::0009"


def test_crash_inside_an_update_keeps_the_committed_index(
    index: Bm25Index, corpus: list[Chunk], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "bm25" / "col"

    def crash_at(point: str) -> object:
        def crash(name: str) -> None:
            if name == point:
                raise OSError(f"killed at {name}")
        return crash

    for point in ("bm25.segment", "bm25.commit"):
        monkeypatch.setattr(bm25_module, "crashpoint", crash_at(point))
        with pytest.raises(OSError, match=point):
            update(directory, [chunk(7, "new text")], [corpus[0].id], applied_seq=1, count=5,
                   epoch="")
        survivor = Bm25Index.open(directory)
        assert survivor is not None and survivor.revision == index.revision
    assert remove_unreferenced(directory)  # the files the crashed commits left behind
    assert sorted(p.name for p in directory.iterdir()) == ["CURRENT.json", "seg-000001"]


def test_load_missing_is_none(tmp_path: Path) -> None:
    assert Bm25Index.load(tmp_path / "nothing") is None
    assert Bm25Index.open(tmp_path / "nothing") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "CURRENT.json").write_text("{not json"),
        lambda d: (d / "CURRENT.json").write_text('{"format": 99}'),
        lambda d: (d / "seg-000001" / "chunks.json").write_text('[{"id": "x"}]'),
        lambda d: (d / "seg-000001" / "chunks.json").unlink(),
        lambda d: (d / "seg-000001" / "postings.npz").write_bytes(b"garbage"),
        lambda d: (d / "seg-000001" / "vocab.json").write_text('["only-one"]'),
        lambda d: (d / "CURRENT.json").write_text(
            (d / "CURRENT.json").read_text().replace('"count": 5', '"count": 4')),
        lambda d: ((d / "meta.json").write_text("{}"), (d / "CURRENT.json").unlink()),
    ],
    ids=["current-json", "current-format", "chunks", "chunks-missing", "postings", "vocab",
         "count", "format-1"],
)
def test_corrupt_index_raises_on_open_and_loads_as_none(index: Bm25Index, tmp_path: Path,
                                                       damage: object) -> None:
    directory = tmp_path / "bm25" / "col"
    damage(directory)  # type: ignore[operator]
    with pytest.raises(CorruptIndexError):
        Bm25Index.open(directory)
    assert Bm25Index.load(directory) is None


def test_filter_masks_are_cached(index: Bm25Index) -> None:
    where = {"source_id": "s1"}
    index.search("cat", k=3, where=where)
    index.search("cat", k=3, where=dict(where))
    assert len(index._masks) == 1


def test_vocabulary_coverage_is_the_share_of_known_query_terms(index: Bm25Index) -> None:
    known = "green"
    assert index.vocabulary_coverage(known) == 1.0
    assert index.vocabulary_coverage(f"{known} zorblaxian") == 0.5
    assert index.vocabulary_coverage("zorblaxian quuxified") == 0.0
    assert index.vocabulary_coverage("the of and") is None  # stopwords only
