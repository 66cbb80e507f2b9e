"""Manifest persistence, quarantine records and the data directory layout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragloom.errors import ConfigError
from ragloom.stores.manifest import DocEntry, Manifest, SourceEntry, load_manifest, save_manifest
from ragloom.stores.paths import DataPaths, validate_collection
from ragloom.stores.quarantine import Quarantine, QuarantineRecord


def manifest(n_sources: int = 2) -> Manifest:
    """A manifest with n sources of two documents each."""
    sources = {
        f"s{i}": SourceEntry(
            origin=f"/data/s{i}.md",
            content_hash=f"raw{i}",
            chunker="recursive:1000:150",
            docs={
                f"s{i}#{j}": DocEntry(
                    content_hash=f"h{i}{j}", chunk_ids=[f"s{i}#{j}::0", f"s{i}#{j}::1"]
                )
                for j in range(2)
            },
            recorded_at="2026-12-01T00:00:00+00:00",
        )
        for i in range(n_sources)
    }
    return Manifest(collection="docs", embedding_profile="p/m/8", sources=sources)


def test_manifest_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "manifests" / "docs.json"
    save_manifest(path, manifest())
    assert load_manifest(path) == (manifest(), None)
    assert [p.name for p in path.parent.iterdir()] == ["docs.json"]


def test_manifest_chunk_ids() -> None:
    assert manifest(1).chunk_ids() == {"s0#0::0", "s0#0::1", "s0#1::0", "s0#1::1"}
    assert Manifest(collection="c", embedding_profile="p").chunk_ids() == set()


def test_missing_manifest_is_not_a_warning(tmp_path: Path) -> None:
    assert load_manifest(tmp_path / "none.json") == (None, None)


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"collection": "docs"}',
        b"\xff\xfe garbage",
        b'{"version": 2, "collection": "docs", "embedding_profile": "p", "sources": {}}',
    ],
    ids=["json", "schema", "encoding", "version"],
)
def test_corrupt_manifest_gives_a_warning(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "docs.json"
    path.write_bytes(content)
    loaded, warning = load_manifest(path)
    assert loaded is None
    assert warning is not None and str(path) in warning


def test_crash_during_save_keeps_previous_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "docs.json"
    save_manifest(path, manifest(1))

    def crash(src: str, dst: str) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="power cut"):
        save_manifest(path, manifest(3))
    monkeypatch.undo()
    assert load_manifest(path) == (manifest(1), None)
    assert [p.name for p in tmp_path.iterdir()] == ["docs.json"]


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
    assert quarantine.list() == []
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
    assert quarantine.remove("a.md") == 2
    assert [r.source_id for r in quarantine.list()] == ["b.md"]
    assert quarantine.remove("a.md") == 0


def test_quarantine_skips_unreadable_files(tmp_path: Path) -> None:
    quarantine = Quarantine(tmp_path)
    quarantine.add(record("a.md", "a.md#0"))
    (tmp_path / "broken.json").write_text("{oops")
    (tmp_path / "wrong.json").write_text('{"source_id": 1}')
    assert [r.source_id for r in quarantine.list()] == ["a.md"]


def test_data_paths_layout(tmp_path: Path) -> None:
    paths = DataPaths(tmp_path)
    assert paths.chroma_dir == tmp_path / "chroma"
    assert paths.bm25_dir("docs") == tmp_path / "bm25" / "docs"
    assert paths.manifest_file("docs") == tmp_path / "manifests" / "docs.json"
    assert paths.quarantine_dir("docs") == tmp_path / "quarantine" / "docs"


@pytest.mark.parametrize("name", ["abc", "my-docs_v1.2", "A" * 512, "a1b"])
def test_valid_collection_names(name: str) -> None:
    assert validate_collection(name) == name


@pytest.mark.parametrize(
    "name", ["ab", "", "-abc", "abc.", "a b c", "a/b/c", "../x", "A" * 513, "été"]
)
def test_invalid_collection_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="3 to 512 characters"):
        DataPaths(tmp_path).bm25_dir(name)
