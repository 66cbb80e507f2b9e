"""Conformance of every DocumentIndex backend: embedded Chroma and a real Chroma server."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragloom.errors import ConfigError, EmbeddingProfileMismatchError, StoreError
from ragloom.providers.embeddings import EmbeddingProfile
from ragloom.state import Chunk
from ragloom.stores import chroma as chroma_module
from ragloom.stores.bm25 import Bm25Index
from ragloom.stores.chroma import ChromaDocumentIndex, close_clients
from ragloom.stores.filters import filterable_metadata, matches

from .conftest import free_port

OpenIndex = Callable[[EmbeddingProfile], ChromaDocumentIndex]

FILTERS: list[dict[str, Any]] = [
    {"source_id": "src0.md"},
    {"doc_id": {"$in": ["doc1", "doc5", "nope"]}},
    {"page": {"$gte": 2}},
    {"page": {"$in": [1, 3, 5]}},
    {"page": 1.0},
    {"lang": {"$ne": "de"}},
    {"lang": {"$nin": ["de"]}},
    {"draft": True},
    {"draft": 1},
    {"missing": {"$ne": 1}},
    {"missing": 1},
    {"tags": "t"},
    {"$or": [{"page": {"$lt": 1}}, {"lang": "de"}]},
    {"$and": [{"start": {"$gt": 5}}, {"end": {"$lte": 39}}]},
    {"$and": [{"page": {"$lte": 4}}]},
    {"source_id": "src1.md", "page": {"$gt": 1}},
]


class DocumentIndexConformance:
    """Behaviour every DocumentIndex backend must show; subclasses provide `open_index`."""

    @pytest.fixture
    def open_index(self) -> OpenIndex:
        raise NotImplementedError

    @pytest.fixture
    def index(self, open_index: OpenIndex, profile: EmbeddingProfile) -> ChromaDocumentIndex:
        return open_index(profile)

    @pytest.fixture
    def filled(
        self, index: ChromaDocumentIndex, chunks: list[Chunk], vectors: np.ndarray
    ) -> ChromaDocumentIndex:
        index.upsert(chunks, vectors)
        return index

    def test_get_chunks_round_trips_exactly(self, index: ChromaDocumentIndex, profile: Any) -> None:
        chunk = Chunk(
            id="a::0::x",
            source_id="a.md",
            doc_id="a",
            text="héllo\nworld",
            start=3,
            end=14,
            metadata={
                "title": "T",
                "page": 2,
                "score": 0.25,
                "flag": False,
                "none": None,
                "tags": ["x", "y"],
                "nested": {"k": [1, {"z": 2.5}]},
                "source_id": "shadow",
                "empty": [],
                "big": 2**70,
            },
        )
        index.upsert([chunk], np.ones((1, profile.dimension), dtype=np.float32))
        assert index.get_chunks([chunk.id]) == [chunk]

    def test_get_chunks_keeps_order_and_skips_missing(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk]
    ) -> None:
        got = filled.get_chunks([chunks[3].id, "missing", chunks[1].id])
        assert [c.id for c in got] == [chunks[3].id, chunks[1].id]

    def test_upsert_replaces(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk], vectors: np.ndarray
    ) -> None:
        changed = chunks[2].model_copy(update={"text": "new text", "metadata": {"page": 99}})
        filled.upsert([changed], vectors[:1])
        assert filled.count() == len(chunks)
        assert filled.get_chunks([changed.id]) == [changed]
        assert np.allclose(filled.get_embeddings([changed.id])[changed.id], vectors[0], atol=1e-6)

    def test_upsert_rejects_wrong_dimension(
        self, index: ChromaDocumentIndex, chunks: list[Chunk]
    ) -> None:
        with pytest.raises(StoreError, match="dimension"):
            index.upsert(chunks[:1], np.ones((1, 3), dtype=np.float32))

    def test_search_orders_by_cosine_similarity(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk], vectors: np.ndarray
    ) -> None:
        query = vectors[3]
        results = filled.search(query, k=4)
        expected = np.argsort(-(vectors @ query), kind="stable")[:4]
        assert [r.chunk.id for r in results] == [chunks[i].id for i in expected]
        assert results[0].score == pytest.approx(1.0, abs=1e-5)
        assert [r.score for r in results] == pytest.approx(
            [float(vectors[i] @ query) for i in expected], abs=1e-5
        )
        assert {r.score_origin for r in results} == {"vector"}
        assert results[0].chunk == chunks[3]

    def test_search_ids_matches_search_without_payloads(
        self, filled: ChromaDocumentIndex, vectors: np.ndarray
    ) -> None:
        full = filled.search(vectors[2], k=5, where={"source_id": "src1.md"})
        ids = filled.search_ids(vectors[2], k=5, where={"source_id": "src1.md"})
        assert [i for i, _ in ids] == [r.chunk.id for r in full]
        assert [s for _, s in ids] == pytest.approx([r.score for r in full], abs=1e-6)
        assert filled.search_ids(vectors[2], k=0) == []

    def test_search_edge_cases(self, index: ChromaDocumentIndex, vectors: np.ndarray) -> None:
        assert index.search(vectors[0], k=5) == []
        assert index.search(vectors[0], k=0) == []
        with pytest.raises(StoreError, match="dimension"):
            index.search(np.ones(3), k=5)

    def test_search_honours_where(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk], vectors: np.ndarray
    ) -> None:
        results = filled.search(vectors[0], k=10, where={"source_id": "src1.md"})
        assert sorted(r.chunk.id for r in results) == sorted(c.id for c in chunks[1::2])

    def test_invalid_filter_is_a_config_error(
        self, filled: ChromaDocumentIndex, vectors: np.ndarray
    ) -> None:
        with pytest.raises(ConfigError, match=r"\$regex"):
            filled.search(vectors[0], k=3, where={"text": {"$regex": "x"}})
        with pytest.raises(ConfigError):
            filled.all_ids({"page": {"$gt": "2"}})

    @pytest.mark.parametrize("where", FILTERS, ids=[str(f) for f in FILTERS])
    def test_filters_select_the_same_chunks_on_both_legs(
        self,
        filled: ChromaDocumentIndex,
        chunks: list[Chunk],
        vectors: np.ndarray,
        tmp_path: Path,
        where: dict[str, Any],
    ) -> None:
        expected = {c.id for c in chunks if matches(where, filterable_metadata(c))}
        bm25 = Bm25Index.build(chunks, tmp_path / "bm25")
        assert set(filled.all_ids(where)) == expected
        assert {r.chunk.id for r in filled.search(vectors[0], k=50, where=where)} == expected
        assert {r.chunk.id for r in bm25.search("common words", k=50, where=where)} == expected

    def test_all_ids_and_all_chunks(self, filled: ChromaDocumentIndex, chunks: list[Chunk]) -> None:
        assert sorted(filled.all_ids()) == sorted(c.id for c in chunks)
        assert sorted(filled.all_ids({"page": {"$lt": 2}})) == sorted([chunks[0].id, chunks[1].id])
        assert sorted(filled.all_chunks(), key=lambda c: c.id) == sorted(chunks, key=lambda c: c.id)

    def test_get_embeddings(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk], vectors: np.ndarray
    ) -> None:
        got = filled.get_embeddings([chunks[0].id, "missing", chunks[5].id])
        assert set(got) == {chunks[0].id, chunks[5].id}
        assert np.allclose(got[chunks[5].id], vectors[5], atol=1e-6)
        assert got[chunks[0].id].dtype == np.float32

    def test_delete_where_returns_count(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk]
    ) -> None:
        assert filled.delete_where({"source_id": "src0.md"}) == 3
        assert sorted(filled.all_ids()) == sorted(c.id for c in chunks[1::2])
        assert filled.delete_where({"source_id": "src0.md"}) == 0
        with pytest.raises(ConfigError):
            filled.delete_where({})

    def test_delete_ids(self, filled: ChromaDocumentIndex, chunks: list[Chunk]) -> None:
        filled.delete_ids([chunks[0].id, "missing"])
        assert filled.count() == len(chunks) - 1
        assert filled.get_chunks([chunks[0].id]) == []

    def test_count_and_drop(
        self, filled: ChromaDocumentIndex, chunks: list[Chunk], vectors: np.ndarray
    ) -> None:
        assert filled.count() == len(chunks)
        filled.drop()
        filled.drop()
        assert filled.count() == 0
        filled.upsert(chunks[:2], vectors[:2])
        assert filled.count() == 2

    def test_profile_mismatch(
        self,
        filled: ChromaDocumentIndex,
        open_index: OpenIndex,
        chunks: list[Chunk],
        vectors: np.ndarray,
    ) -> None:
        other = EmbeddingProfile(provider="test", model="other-model", dimension=vectors.shape[1])
        reopened = open_index(other)
        with pytest.raises(EmbeddingProfileMismatchError) as caught:
            reopened.count()
        message = str(caught.value)
        assert "test/random-unit/8" in message and "test/other-model/8" in message
        assert "--reindex" in message
        reopened.drop()
        reopened.upsert(chunks[:1], vectors[:1])
        assert reopened.count() == 1

    def test_persists_across_new_clients(
        self,
        filled: ChromaDocumentIndex,
        open_index: OpenIndex,
        profile: EmbeddingProfile,
        chunks: list[Chunk],
        vectors: np.ndarray,
    ) -> None:
        close_clients()
        reopened = open_index(profile)
        assert reopened.count() == len(chunks)
        assert reopened.get_chunks([chunks[4].id]) == [chunks[4]]
        assert reopened.search(vectors[4], k=1)[0].chunk.id == chunks[4].id

    def test_a_handle_survives_another_writers_reindex(
        self,
        filled: ChromaDocumentIndex,
        open_index: OpenIndex,
        profile: EmbeddingProfile,
        chunks: list[Chunk],
        vectors: np.ndarray,
    ) -> None:
        assert filled.search(vectors[0], k=1)[0].chunk.id == chunks[0].id  # handle cached
        old_id = filled.collection_id
        other = open_index(profile)  # another process's index object
        other.drop()
        assert filled.search(vectors[0], k=3) == [] and filled.count() == 0  # dropped: empty
        other.upsert(chunks[1:3], vectors[1:3])
        assert [h.chunk.id for h in filled.search(vectors[1], k=5)] == [chunks[1].id, chunks[2].id]
        assert sorted(filled.all_ids()) == sorted(c.id for c in chunks[1:3])
        assert filled.collection_id != old_id
        other.drop()
        filled.upsert(chunks[:1], vectors[:1])  # a write through the stale handle recreates it
        assert other.count() == 1

    def test_upsert_in_batches(
        self,
        index: ChromaDocumentIndex,
        monkeypatch: pytest.MonkeyPatch,
        chunks: list[Chunk],
        vectors: np.ndarray,
    ) -> None:
        monkeypatch.setattr(index, "_batch_size", 4)
        index.upsert(chunks, vectors)
        assert index.count() == len(chunks)
        assert sorted(index.all_ids()) == sorted(c.id for c in chunks)
        assert index.delete_where({"page": {"$gte": 0}}) == len(chunks)


class TestEmbeddedChroma(DocumentIndexConformance):
    """Chroma PersistentClient under the data directory."""

    @pytest.fixture
    def open_index(self, tmp_path: Path) -> OpenIndex:
        return lambda profile: ChromaDocumentIndex("conformance", profile, data_dir=tmp_path)

    def test_files_live_under_data_dir(self, filled: ChromaDocumentIndex, tmp_path: Path) -> None:
        assert (tmp_path / "chroma" / "chroma.sqlite3").is_file()


@pytest.mark.integration
class TestServerChroma(DocumentIndexConformance):
    """Chroma HttpClient against a real `chroma run` server."""

    @pytest.fixture
    def open_index(self, chroma_server: str, tmp_path: Path) -> OpenIndex:
        name = f"conf-{uuid.uuid4().hex[:12]}"
        return lambda profile: ChromaDocumentIndex(
            name, profile, data_dir=tmp_path, server_url=chroma_server
        )


def test_invalid_collection_name(tmp_path: Path, profile: EmbeddingProfile) -> None:
    with pytest.raises(ConfigError, match="3 to 512"):
        ChromaDocumentIndex("x", profile, data_dir=tmp_path)


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1:1", "127.0.0.1:8000", "http://", "http://h:1/api"]
)
def test_invalid_server_url(tmp_path: Path, profile: EmbeddingProfile, url: str) -> None:
    with pytest.raises(ConfigError, match="Chroma server URL"):
        ChromaDocumentIndex("abc", profile, data_dir=tmp_path, server_url=url)


def test_dead_server_fails_fast(tmp_path: Path, profile: EmbeddingProfile) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(StoreError, match="does not answer") as caught:
        ChromaDocumentIndex("abc", profile, data_dir=tmp_path, server_url=url)
    assert time.monotonic() - started < 10
    assert url in str(caught.value)


def test_silent_server_times_out(
    tmp_path: Path, profile: EmbeddingProfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chroma_module, "CONNECT_TIMEOUT_S", 0.5)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(StoreError, match="Timeout"):
            ChromaDocumentIndex("abc", profile, data_dir=tmp_path, server_url=url)
    assert time.monotonic() - started < 5
