"""The SQLite manifest, quarantine records and the data directory layout."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ragloom.errors import ConfigError
from ragloom.stores import manifest as manifest_module
from ragloom.stores.manifest import (
    DocEntry,
    ManifestStore,
    SourceEntry,
    remove_temp_files,
    write_atomic,
)
from ragloom.stores.paths import DataPaths, validate_collection
from ragloom.stores.quarantine import Quarantine, QuarantineRecord


def entry(i: int, docs: int = 2) -> SourceEntry:
    """A source entry with `docs` documents of two chunks each."""
    return SourceEntry(
        identity="v1:recursive:size=1000:overlap=150",
        content_hash=f"raw{i}",
        size=10 * i,
        mtime_ns=1_000 + i,
        docs={
            f"s{i}#{j}": DocEntry(content_hash=f"h{i}{j}", chunk_ids=[f"s{i}#{j}::0", f"s{i}#{j}::1"])
            for j in range(docs)
        },
        recorded_at="2026-12-01T00:00:00+00:00",
    )


@pytest.fixture
def store(tmp_path: Path) -> ManifestStore:
    opened = ManifestStore(tmp_path / "manifests" / "docs.sqlite")
    yield opened
    opened.close()


def test_record_round_trips_entries_and_stats(store: ManifestStore) -> None:
    store.record({"s0": entry(0), "s1": entry(1, docs=1)}, added_ids=["a", "b"])
    assert store.entries(["s1", "s0", "nope"]) == {"s0": entry(0), "s1": entry(1, docs=1)}
    stats = store.stats()
    assert stats["s0"].size == 0 and stats["s1"].mtime_ns == 1_001
    assert store.total_chunks() == 6 and store.source_count() == 2
    assert store.chunk_ids() == set(entry(0).chunk_ids()) | set(entry(1, docs=1).chunk_ids())


def test_rerecording_a_source_replaces_its_documents(store: ManifestStore) -> None:
    store.record({"s0": entry(0, docs=3)})
    store.record({"s0": entry(0, docs=1)})
    assert list(store.entries(["s0"])["s0"].docs) == ["s0#0"]
    assert store.total_chunks() == 2


def test_dropped_sources_and_journal(store: ManifestStore) -> None:
    store.record({"s0": entry(0), "s1": entry(1)}, added_ids=["x", "y"])
    store.record({}, dropped=["s0"], deleted_ids=["x"])
    assert store.source_ids() == ["s1"]
    assert [(op, cid) for _seq, cid, op in store.journal(after=0)] == [
        ("add", "x"), ("add", "y"), ("del", "x")]
    seq_of_y = store.journal(after=0)[1][0]
    store.trim_journal(seq_of_y)
    assert [cid for _seq, cid, _op in store.journal(after=0)] == ["x"]
    assert store.last_seq() == 3  # sequence numbers are never reused after a trim


def test_the_running_chunk_total_follows_every_write(store: ManifestStore) -> None:
    assert store.total_chunks() == 0  # computed once, then kept by the writes
    store.record({"s0": entry(0), "s1": entry(1, docs=3)})
    store.record({"s0": entry(0, docs=1)}, dropped=["s1"])
    store.record({"s2": entry(2)}, dropped=["never-recorded"])
    assert store.total_chunks() == store.total_chunks(exact=True) == 2 + 4
    store.reset_sources({"s3": entry(3, docs=3)})
    assert store.total_chunks() == store.total_chunks(exact=True) == 6
    store.set_meta(manifest_module.TOTAL_KEY, "999")  # drifted (an older version wrote rows)
    assert store.total_chunks(exact=True) == 6 and store.total_chunks() == 6


def test_intent_is_cleared_only_by_the_record_that_settles_it(store: ManifestStore) -> None:
    intent = store.write_intent(["s0"], ["s0#0::0"])
    assert [(i.sources, i.chunk_ids) for i in store.intents()] == [(["s0"], ["s0#0::0"])]
    store.record({"s1": entry(1)})
    assert len(store.intents()) == 1
    store.record({"s0": entry(0)}, intent=intent)
    assert store.intents() == []


def test_failure_inside_record_rolls_the_whole_batch_back(
    store: ManifestStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.record({"s0": entry(0)})
    intent = store.write_intent(["s0", "s1"], ["s1#0::0"])

    def power_cut(name: str) -> None:
        raise OSError(f"power cut at {name}")

    monkeypatch.setattr(manifest_module, "crashpoint", power_cut)
    with pytest.raises(OSError, match="manifest.record"):
        store.record({"s0": entry(0, docs=1), "s1": entry(1)}, added_ids=["s1#0::0"], intent=intent)
    assert store.entries(["s0", "s1"]) == {"s0": entry(0)}
    assert store.journal(after=0) == [] and len(store.intents()) == 1


def test_touch_updates_the_stat_only(store: ManifestStore) -> None:
    store.record({"s0": entry(0)})
    store.touch({"s0": (99, 12345)})
    assert (store.stats()["s0"].size, store.stats()["s0"].mtime_ns) == (99, 12345)
    assert store.entries(["s0"])["s0"].docs == entry(0).docs


def legacy_json(sources: int = 2) -> str:
    """A version-1 JSON manifest as ragloom wrote it before SQLite."""
    return json.dumps({
        "version": 1, "collection": "docs", "embedding_profile": "p/m/8",
        "sources": {
            f"/d/s{i}.csv": {"origin": "/d", "content_hash": f"raw{i}", "chunker": "v1:recursive",
                             "docs": {f"/d/s{i}.csv#row=1": {"content_hash": "h",
                                                             "chunk_ids": [f"c{i}"]}},
                             "recorded_at": "2026-11-30T00:00:00+00:00"}
            for i in range(sources)
        },
    })


def test_json_manifest_is_migrated_once_then_deleted(tmp_path: Path) -> None:
    legacy = tmp_path / "docs.json"
    legacy.write_text(legacy_json())
    store, warnings = ManifestStore.open(tmp_path / "docs.sqlite", legacy=legacy,
                                         identity_of=lambda sid, chunker: f"{chunker}|csv")
    with store:
        assert warnings == ["migrated 2 source(s) from docs.json to SQLite"]
        assert not legacy.exists()
        assert store.get_meta("profile") == "p/m/8"
        migrated = store.entries(["/d/s1.csv"])["/d/s1.csv"]
        assert migrated.identity == "v1:recursive|csv" and migrated.chunk_ids() == ["c1"]
        assert migrated.mtime_ns == -1  # no stat known: the first run hashes the bytes
        assert store.total_chunks() == 2


@pytest.mark.parametrize("content", ["{not json", '{"version": 7, "collection": "docs", '
                                     '"embedding_profile": "p", "sources": {}}'],
                         ids=["json", "version"])
def test_unreadable_json_manifest_gives_a_warning(tmp_path: Path, content: str) -> None:
    legacy = tmp_path / "docs.json"
    legacy.write_text(content)
    store, warnings = ManifestStore.open(tmp_path / "docs.sqlite", legacy=legacy)
    with store:
        assert len(warnings) == 1 and str(legacy) in warnings[0] and "full ingest" in warnings[0]
        assert store.source_count() == 0 and not legacy.exists()


def test_corrupt_or_newer_database_is_replaced_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "docs.sqlite"
    path.write_bytes(b"\xff\xfe garbage that is not a database" * 100)
    store, warnings = ManifestStore.open(path)
    with store:
        assert "unreadable" in warnings[0] and str(path) in warnings[0]
        store.record({"s0": entry(0)})
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    store, warnings = ManifestStore.open(path)
    with store:
        assert "schema version 99" in warnings[0] and store.source_count() == 0


def test_epoch_is_kept_across_opens_and_new_for_a_new_database(tmp_path: Path) -> None:
    with ManifestStore(tmp_path / "a.sqlite") as first:
        epoch = first.get_meta("epoch")
    with ManifestStore(tmp_path / "a.sqlite") as again:
        assert again.get_meta("epoch") == epoch
    with ManifestStore(tmp_path / "b.sqlite") as other:
        assert other.get_meta("epoch") not in (None, epoch)


def test_temp_file_leftovers_are_removed(tmp_path: Path) -> None:
    write_atomic(tmp_path / "keep.json", "{}")
    (tmp_path / ".keep.json.abc123.tmp").write_text("half")
    assert remove_temp_files(tmp_path) == [".keep.json.abc123.tmp"]
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]


def record(source_id: str, doc_id: str, reason: str = "prompt injection") -> QuarantineRecord:
    """A quarantine record for one document."""
    return QuarantineRecord(
        source_id=source_id,
        doc_id=doc_id,
        reason=reason,
        signals=["ignore previous"],
        content_hash="abc",
        excerpt="x" * 600,
        collection="docs",
    )


def test_quarantine_add_list_replace_remove(tmp_path: Path) -> None:
    quarantine = Quarantine(tmp_path / "quarantine" / "docs")
    assert quarantine.list() == [] and quarantine.source_ids() == []
    quarantine.add(record("b.md", "b.md#0"))
    quarantine.add(record("a.md", "a.md#1"))
    quarantine.add(record("a.md", "a.md#0"))
    quarantine.add(record("a.md", "a.md#0", reason="replaced"))
    listed = quarantine.list()
    assert [(r.source_id, r.doc_id) for r in listed] == [
        ("a.md", "a.md#0"),
        ("a.md", "a.md#1"),
        ("b.md", "b.md#0"),
    ]
    assert listed[0].reason == "replaced"
    assert len(listed[0].excerpt) == 500
    assert listed[0].quarantined_at
    assert quarantine.source_ids() == ["a.md", "b.md"]
    assert quarantine.remove("a.md") == 2
    assert [r.source_id for r in quarantine.list()] == ["b.md"]
    assert quarantine.remove("a.md") == 0


def test_quarantine_skips_unreadable_files_and_migrates_the_flat_layout(tmp_path: Path) -> None:
    quarantine = Quarantine(tmp_path)
    quarantine.add(record("a.md", "a.md#0"))
    write_atomic(tmp_path / "0123abcd.json", record("old.md", "old.md").model_dump_json())
    (tmp_path / "broken.json").write_text("{oops")
    assert [r.source_id for r in quarantine.list()] == ["a.md", "old.md"]
    assert not (tmp_path / "0123abcd.json").exists() and not (tmp_path / "broken.json").exists()
    assert quarantine.remove("old.md") == 1


def test_data_paths_layout(tmp_path: Path) -> None:
    paths = DataPaths(tmp_path)
    assert paths.chroma_dir == tmp_path / "chroma"
    assert paths.bm25_dir("docs") == tmp_path / "bm25" / "docs"
    assert paths.manifest_file("docs") == tmp_path / "manifests" / "docs.sqlite"
    assert paths.legacy_manifest_file("docs") == tmp_path / "manifests" / "docs.json"
    assert paths.quarantine_dir("docs") == tmp_path / "quarantine" / "docs"
    assert paths.lock_file("docs") == tmp_path / "locks" / "docs.lock"


@pytest.mark.parametrize("name", ["abc", "my-docs_v1.2", "A" * 512, "a1b", "999.1.1.1", "1.2.3"])
def test_valid_collection_names(name: str) -> None:
    assert validate_collection(name) == name


@pytest.mark.parametrize(
    "name",
    ["ab", "", "-abc", "abc.", "a b c", "a/b/c", "../x", "A" * 513, "été", "10.0.0.1", "ab..cd"],
)
def test_invalid_collection_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="3 to 512 characters"):
        DataPaths(tmp_path).bm25_dir(name)


@pytest.mark.parametrize("name", ["10.0.0.1", "ab..cd", "my-docs_v1.2", "999.1.1.1"])
def test_the_rule_is_chromas(tmp_path: Path, name: str) -> None:
    import chromadb

    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    try:
        validate_collection(name)
        ours = True
    except ConfigError:
        ours = False
    try:
        client.get_or_create_collection(name, embedding_function=None)
        theirs = True
    except Exception:  # chromadb raises its own validation error type
        theirs = False
    assert ours == theirs
