"""The identity of an embedding space, shared by the embedders that make vectors and the indexes
that store them (so stores need not import providers)."""

from __future__ import annotations

from pydantic import BaseModel


class EmbeddingProfile(BaseModel):
    """Identity of an embedding space: vectors from different profiles never mix."""

    provider: str
    model: str
    dimension: int

    def key(self) -> str:
        """Compact string form stored with each collection."""
        return f"{self.provider}/{self.model}/{self.dimension}"
