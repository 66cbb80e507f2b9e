"""A tiny two-collection knowledge base with business-unit metadata, keys of every scope, and one
service app per test module (in-process, through FastAPI's TestClient).

Chunk metadata (`bu`, `lang`, `type`, `last_modified`) is stamped onto the ingested chunks here,
through the index interfaces, because this branch's ingest does not read front matter yet.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragloom import resources
from ragloom.api.app import create_app
from ragloom.api.keys import add_key
from ragloom.runner import ingest
from ragloom.settings import RagSettings, load_settings
from ragloom.stores.bm25 import Bm25Index

NOW = time.time()
DAY = 86400.0
DOCS: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {
    "scoped": {
        "sales-codes.md": ("# Sales code word\n\nThe quarterly code word of the sales team is "
                           "PELICAN. Sales reports are due on Fridays.\n",
                           {"bu": "sales", "lang": "en", "type": "memo",
                            "last_modified": NOW - 2 * DAY}),
        "hr-codes.md": ("# HR code word\n\nThe quarterly code word of the HR team is WALRUS. "
                        "HR reviews happen in March.\n",
                        {"bu": "hr", "lang": "en", "type": "memo",
                         "last_modified": NOW - 400 * DAY}),
        "sales-fr.md": ("# Mot de passe commercial\n\nLe mot de code trimestriel de l'équipe "
                        "commerciale est PELICAN.\n",
                        {"bu": "sales", "lang": "fr", "type": "note",
                         "last_modified": NOW - 5 * DAY}),
    },
    "other": {
        "pump.md": ("# Pump\n\nThe P-40 pump moves 40 litres a minute. It runs on 24 volts.\n",
                    {"bu": "ops", "lang": "en", "type": "manual", "last_modified": NOW}),
    },
}


def stamp_metadata(settings: RagSettings, collection: str,
                   metadata: dict[str, dict[str, Any]]) -> None:
    """Add metadata to every chunk of the named source files, in Chroma and in BM25."""
    run = settings.model_copy(update={"collection": collection})
    index = resources.document_index(run)
    chunks = index.all_chunks()
    for chunk in chunks:
        chunk.metadata.update(metadata.get(Path(chunk.source_id).name, {}))
    vectors = index.get_embeddings([c.id for c in chunks])
    index.upsert(chunks, np.stack([vectors[c.id] for c in chunks]))
    Bm25Index.build(chunks, resources.data_paths(run).bm25_dir(collection))


def build_kb(root: Path) -> RagSettings:
    """Ingest DOCS into root/data and stamp their metadata; return the settings."""
    settings = load_settings(data_dir=root / "data", collection="scoped")
    for collection, docs in DOCS.items():
        folder = root / collection
        folder.mkdir()
        for name, (text, _) in docs.items():
            (folder / name).write_text(text, encoding="utf-8")
        report = ingest([str(folder)], collection=collection, settings=settings)
        assert not report.failed and report.chunks_written >= len(docs)
        stamp_metadata(settings, collection, {n: m for n, (_, m) in docs.items()})
    return settings


@dataclass
class Keys:
    """The secrets of the test keys."""

    admin: str
    sales: str
    hr: str
    other: str
    sales_writer: str
    path: Path

    @staticmethod
    def header(secret: str) -> dict[str, str]:
        """The Authorization header of a key."""
        return {"Authorization": f"Bearer {secret}"}


def make_keys(path: Path) -> Keys:
    """One key per scope the tests need."""
    return Keys(
        admin=add_key(path, "admin", collections=["*"], scopes=["read", "ingest"]),
        sales=add_key(path, "sales", collections=["scoped"], bu="sales"),
        hr=add_key(path, "hr", collections=["scoped"], bu="hr"),
        other=add_key(path, "other", collections=["other"]),
        sales_writer=add_key(path, "sales-writer", collections=["scoped"], bu="sales",
                             scopes=["read", "ingest"]),
        path=path,
    )


@pytest.fixture(scope="session")
def kb(tmp_path_factory: pytest.TempPathFactory) -> RagSettings:
    """The knowledge base, built once per session."""
    return build_kb(tmp_path_factory.mktemp("api-kb"))


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """The keys file and its secrets."""
    return make_keys(tmp_path_factory.mktemp("api-keys") / "keys.yaml")


@dataclass
class Served:
    """A test client over an app, and the span exporter the app writes to."""

    client: TestClient
    spans: InMemorySpanExporter
    settings: RagSettings


def serve(settings: RagSettings, **api: Any) -> Iterator[Served]:
    """A TestClient over a fresh app with these api settings (lifespan run)."""
    spans = InMemorySpanExporter()
    run = settings.model_copy(update={"api": settings.api.model_copy(update=api)})
    with TestClient(create_app(run, span_exporter=spans)) as client:
        yield Served(client=client, spans=spans, settings=run)


@pytest.fixture(scope="module")
def keyed(kb: RagSettings, keys: Keys) -> Iterator[Served]:
    """The service with keys, generous limits."""
    yield from serve(kb, keys_file=keys.path, rate_limit="10000/minute")
