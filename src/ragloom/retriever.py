"""LangChain face: a `BaseRetriever` over the retrieval-only graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from ragloom.settings import RagSettings
from ragloom.state import Citation


def citation_document(citation: Citation, text: str) -> Document:
    """A LangChain Document carrying the citation's provenance in its metadata."""
    metadata = {
        **citation.metadata,
        "chunk_id": citation.chunk_id,
        "source_id": citation.source_id,
        "marker": citation.marker,
        "score": citation.score,
        "score_origin": citation.score_origin,
        "start": citation.start,
        "end": citation.end,
    }
    return Document(page_content=text, metadata=metadata, id=citation.chunk_id)


class RagloomRetriever(BaseRetriever):
    """Ranked chunks of a ragloom collection as Documents with citation metadata."""

    collection: str | None = None
    profile: str | None = None
    k: int = Field(5, ge=1, le=100)
    filters: dict[str, Any] | None = None
    data_dir: str | Path | None = None
    settings: RagSettings | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        from ragloom import resources
        from ragloom.runner import retrieve

        settings = self._resolved()  # once: the run and the chunk texts read the same
        result = retrieve(query, top_n=int(kwargs.get("k", self.k)),
                          filters=kwargs.get("filters", self.filters), settings=settings)
        index = resources.document_index(settings)
        texts = {c.id: c.text for c in index.get_chunks([c.chunk_id for c in result.citations])}
        return [citation_document(c, texts.get(c.chunk_id, c.snippet)) for c in result.citations]

    def _resolved(self) -> RagSettings:
        from ragloom.settings import resolve_settings

        return resolve_settings(self.settings, profile=self.profile, collection=self.collection,
                                data_dir=self.data_dir)


def as_retriever(
    *,
    collection: str | None = None,
    profile: str | None = None,
    k: int = 5,
    filters: dict[str, Any] | None = None,
    data_dir: str | Path | None = None,
    settings: RagSettings | None = None,
) -> RagloomRetriever:
    """Return a LangChain retriever over the retrieval-only graph of a collection."""
    return RagloomRetriever(collection=collection, profile=profile, k=k, filters=filters,
                            data_dir=data_dir, settings=settings)
