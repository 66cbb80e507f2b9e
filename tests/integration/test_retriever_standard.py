"""RagloomRetriever against LangChain's standard retriever suite, over the ingested example KB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

from ragloom.retriever import RagloomRetriever
from tests.integration.servers import ingest_example_kb, kb_files

pytestmark = pytest.mark.integration

COLLECTION = "retrkb"
QUERY = "How do I pair the Lumen hub with the outdoor sensor?"
_DATA_DIR: dict[str, Path] = {}
"""Where examples/kb was ingested for this module (set by the module fixture below)."""


@pytest.fixture(scope="module", autouse=True)
def kb_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ingest examples/kb once for every test of this module."""
    data_dir = tmp_path_factory.mktemp("retriever") / "data"
    ingest_example_kb(data_dir, COLLECTION)
    _DATA_DIR["path"] = data_dir
    return data_dir


class TestRagloomRetrieverStandard(RetrieversIntegrationTests):
    """The langchain-tests suite: k in the constructor and at invoke time, sync and async."""

    # The suite's async test is unmarked (it assumes asyncio_mode=auto) and may not be overridden:
    # mark the whole class and silence pytest-asyncio's note about the sync tests it also marks.
    pytestmark = [
        pytest.mark.asyncio,
        pytest.mark.filterwarnings("ignore:.*marked with '@pytest.mark.asyncio' but it is not an "
                                   "async function:pytest.PytestWarning"),
    ]

    @property
    def retriever_constructor(self) -> type[RagloomRetriever]:
        return RagloomRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"data_dir": str(_DATA_DIR["path"]), "collection": COLLECTION}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


def test_documents_carry_citation_metadata_with_exact_offsets(kb_data_dir: Path) -> None:
    retriever = RagloomRetriever(data_dir=kb_data_dir, collection=COLLECTION, k=8)
    docs = retriever.invoke("What does the FAQ say about battery life and firmware updates?")
    assert docs and all(isinstance(d, Document) for d in docs)
    files = kb_files()
    for rank, doc in enumerate(docs, start=1):
        meta = doc.metadata
        for key in ("chunk_id", "source_id", "score", "score_origin", "start", "end", "marker"):
            assert key in meta, (key, meta)
        assert doc.id == meta["chunk_id"] and meta["marker"] == rank
        assert meta["source_id"] in files
        assert meta["score_origin"].removesuffix("+siblings") in ("rrf", "vector", "bm25", "convex")
        assert isinstance(meta["score"], float)
        assert 0 <= meta["start"] < meta["end"]
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)

    markdown = [d for d in docs if d.metadata["source_id"].endswith(".md")]
    assert markdown, [d.metadata["source_id"] for d in docs]
    for doc in markdown:
        source = Path(doc.metadata["source_id"]).read_text(encoding="utf-8")
        assert doc.page_content == source[doc.metadata["start"]:doc.metadata["end"]]
