"""The live components of one ingestion run, and the ones a reindex writes through."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ragloom.ingestion.chunkers import Chunker
from ragloom.nodes.ingest.schema import IngestState
from ragloom.providers.embeddings import Embedder
from ragloom.settings import RagSettings
from ragloom.stores.base import DocumentIndex
from ragloom.stores.manifest import ManifestStore
from ragloom.stores.paths import DataPaths, shadow_collection
from ragloom.stores.quarantine import Quarantine


@dataclass
class IngestDeps:
    """Live components one ingestion run uses, bound into the nodes by the graph builder."""

    settings: RagSettings
    index: DocumentIndex
    embedder: Embedder
    chunker: Chunker
    paths: DataPaths
    manifest_file: Path | None = None
    """Where this run's manifest is, when not the collection's own (a reindex builds a shadow)."""

    @property
    def collection(self) -> str:
        """The collection being ingested into (its name, also while a reindex builds a shadow)."""
        return self.settings.collection

    def manifest(self) -> ManifestStore:
        """Open this run's manifest (close it after use: `with deps.manifest() as m:`)."""
        return ManifestStore(self.manifest_file or self.paths.manifest_file(self.collection))

    def quarantine(self) -> Quarantine:
        """The collection's quarantine."""
        return Quarantine(self.paths.quarantine_dir(self.collection))


def write_target(state: IngestState, deps: IngestDeps) -> IngestDeps:
    """The deps this run writes through: a reindex builds a shadow collection and manifest beside
    the live ones and swaps them in at finalize, so readers see the old state until then."""
    if not state.get("reindex"):
        return deps
    return replace(deps, index=deps.index.sibling(shadow_collection(deps.collection)),
                   manifest_file=deps.paths.reindex_manifest_file(deps.collection))
