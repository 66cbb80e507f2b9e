"""The ingestion manifest of a collection: one SQLite database (WAL), one row per source and document.

Every batch is recorded in one transaction, so a run writes in proportion to what changed. Two
small logs make a crash cheap to repair without reading the whole collection:

- `intents`: the sources and chunk ids a batch is about to write to or delete from the document
  index, written before it touches the index and cleared in the transaction that records it. An
  intent left behind names exactly the work a crash interrupted.
- `journal`: chunk ids added and deleted since the BM25 index last caught up (it applies them and
  trims the journal), so BM25 follows the manifest by replaying only the change.

The manifest records a source only after its chunks are stored; the document index (Chroma) stays
the source of truth and the ingest graph repairs the manifest against it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field, ValidationError

from ragloom.stores.crashpoints import crashpoint

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
LEGACY_VERSION = 1
LAST_INGEST_KEY = "last_ingest"
"""Meta key: when the last ingest into the collection finished (ISO 8601, UTC)."""
TOTAL_KEY = "total_chunks"
"""Meta key: the running total of chunks over all sources, kept by every write of a source row."""
CLEAN_KEY = "clean_finish"
"""Meta key: "1" while the last run finished cleanly; a run sets it to "0" before writing."""
_STATS_SQL = "SELECT source_id, identity, size, mtime_ns FROM sources"
_SQL_BATCH = 500  # ids per `IN (...)` clause, under SQLite's variable limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    source_id TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    documents INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    recorded_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS docs (
    source_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunk_ids TEXT NOT NULL,
    PRIMARY KEY (source_id, doc_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS intents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sources TEXT NOT NULL,
    chunk_ids TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('add', 'del'))
);
"""


class DocEntry(BaseModel):
    """One document of a source: its text hash and the ids of its chunks."""

    content_hash: str
    chunk_ids: list[str] = Field(default_factory=list)


class SourceEntry(BaseModel):
    """One ingested source: identity (chunker + loader options), raw-bytes hash, stat, documents."""

    identity: str
    content_hash: str
    size: int = -1
    mtime_ns: int = -1
    docs: dict[str, DocEntry] = Field(default_factory=dict)
    recorded_at: str

    def chunk_ids(self) -> list[str]:
        """Every chunk id of the source, document by document."""
        return [cid for doc in self.docs.values() for cid in doc.chunk_ids]


class SourceStat(NamedTuple):
    """What plan needs to settle a source without reading it: identity, size and mtime (a tuple:
    plan builds one per recorded source)."""

    identity: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Intent:
    """Work a batch announced before touching the document index and never recorded."""

    id: int
    sources: list[str]
    chunk_ids: list[str]


class _LegacySource(BaseModel):
    origin: str
    content_hash: str
    chunker: str
    docs: dict[str, DocEntry] = Field(default_factory=dict)
    recorded_at: str


class _LegacyManifest(BaseModel):
    version: int
    collection: str
    embedding_profile: str
    sources: dict[str, _LegacySource] = Field(default_factory=dict)


def _chunks(items: list[str], size: int = _SQL_BATCH) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def remove_database(path: Path) -> None:
    """Delete an SQLite database with its WAL, shared-memory and rollback journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class ManifestStore:
    """Read and write one collection's manifest; each method is its own transaction."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            version = self.get_meta("schema")
            if version is None:
                self.set_meta("schema", str(SCHEMA_VERSION))
                self.set_meta("epoch", uuid.uuid4().hex)
            elif version != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError(
                    f"schema version {version}, this ragloom reads version {SCHEMA_VERSION}"
                )
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        legacy: Path | None = None,
        identity_of: Callable[[str, str], str] | None = None,
    ) -> tuple[ManifestStore, list[str]]:
        """Open (or create) the manifest, migrating a legacy JSON one; warnings say what was lost.

        An unreadable database is set aside for a fresh one (the run then re-ingests what the
        document index cannot vouch for). `identity_of(source_id, chunker_fingerprint)` gives a
        migrated source its identity.
        """
        warnings: list[str] = []
        try:
            store = cls(path)
        except sqlite3.DatabaseError as exc:
            warnings.append(f"Manifest {path} is unreadable ({exc}); falling back to a full ingest")
            remove_database(Path(path))
            store = cls(path)
        if legacy is not None and legacy.exists():
            warnings.extend(store._migrate(legacy, identity_of or (lambda _sid, chunker: chunker)))
        return store, warnings

    def _migrate(self, legacy: Path, identity_of: Callable[[str, str], str]) -> list[str]:
        """Copy a version-1 JSON manifest into this database once, then delete the JSON file."""
        warnings: list[str] = []
        if self.get_meta("profile") is None:
            try:
                old = _LegacyManifest.model_validate_json(legacy.read_text(encoding="utf-8"))
                if old.version != LEGACY_VERSION:
                    raise ValueError(f"version {old.version}")
            except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
                reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                warnings.append(f"Manifest {legacy} is corrupt ({reason}); "
                                "falling back to a full ingest")
            else:
                entries = {
                    sid: SourceEntry(identity=identity_of(sid, s.chunker), content_hash=s.content_hash,
                                     docs=s.docs, recorded_at=s.recorded_at)
                    for sid, s in old.sources.items()
                }
                with self._transaction() as db:
                    self._put_sources(db, entries)
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('profile', ?)",
                               (old.embedding_profile,))
                warnings.append(f"migrated {len(entries)} source(s) from {legacy.name} to SQLite")
        legacy.unlink(missing_ok=True)
        return warnings

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def __enter__(self) -> ManifestStore:
        """The store itself, closed on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store."""
        self.close()

    # ------------------------------------------------------------------------------ transactions

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def get_meta(self, key: str) -> str | None:
        """One value of the meta table (profile, epoch, collection_id, schema)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set one value of the meta table."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------------------------------ reads

    def stats(self) -> dict[str, SourceStat]:
        """What plan compares against a stat of each source, for every recorded source."""
        return {row[0]: SourceStat._make(row[1:]) for row in self._db.execute(_STATS_SQL)}

    def stats_of(self, source_ids: Iterable[str]) -> dict[str, SourceStat]:
        """`stats` for the recorded sources among source_ids only."""
        stats: dict[str, SourceStat] = {}
        for part in _chunks(list(dict.fromkeys(source_ids))):
            marks = ",".join("?" * len(part))
            for row in self._db.execute(f"{_STATS_SQL} WHERE source_id IN ({marks})", part):
                stats[row[0]] = SourceStat._make(row[1:])
        return stats

    def source_ids_within(self, paths: Iterable[str]) -> list[str]:
        """Recorded source ids equal to one of paths or below it (`path/...`), by index range."""
        found: dict[str, None] = {}
        for path in paths:
            below = path.rstrip("/") + "/"
            rows = self._db.execute(
                "SELECT source_id FROM sources WHERE source_id = ? "
                "OR (source_id >= ? AND source_id < ?)", (path, below, below[:-1] + "0"))
            found.update(dict.fromkeys(row[0] for row in rows))
        return list(found)

    def source_ids(self) -> list[str]:
        """Every recorded source id, sorted."""
        return [r[0] for r in self._db.execute("SELECT source_id FROM sources ORDER BY source_id")]

    def entries(self, source_ids: Iterable[str]) -> dict[str, SourceEntry]:
        """The full entries (documents and chunk ids) of the recorded sources among source_ids."""
        wanted = list(dict.fromkeys(source_ids))
        entries: dict[str, SourceEntry] = {}
        for part in _chunks(wanted):
            marks = ",".join("?" * len(part))
            for sid, identity, raw, size, mtime, recorded in self._db.execute(
                "SELECT source_id, identity, content_hash, size, mtime_ns, recorded_at FROM sources "
                f"WHERE source_id IN ({marks})", part
            ):
                entries[sid] = SourceEntry(identity=identity, content_hash=raw, size=size,
                                           mtime_ns=mtime, recorded_at=recorded)
            for sid, doc_id, doc_hash, ids in self._db.execute(
                f"SELECT source_id, doc_id, content_hash, chunk_ids FROM docs WHERE source_id IN ({marks})",
                part,
            ):
                if sid in entries:
                    entries[sid].docs[doc_id] = DocEntry(content_hash=doc_hash, chunk_ids=json.loads(ids))
        return entries

    def total_chunks(self, *, exact: bool = False) -> int:
        """Number of chunks recorded over all sources: the running total every write keeps, or
        (`exact`, or when there is none yet) the sum over the rows, which resets that total."""
        if not exact and (kept := self.get_meta(TOTAL_KEY)) is not None:
            return int(kept)
        with self._transaction() as db:
            total = int(db.execute("SELECT COALESCE(SUM(chunks), 0) FROM sources").fetchone()[0])
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TOTAL_KEY, str(total)))
        return total

    def source_count(self) -> int:
        """Number of recorded sources."""
        return int(self._db.execute("SELECT COUNT(*) FROM sources").fetchone()[0])

    def chunk_ids(self) -> set[str]:
        """Every recorded chunk id (reads the whole manifest: full repairs only)."""
        return {cid for (ids,) in self._db.execute("SELECT chunk_ids FROM docs") for cid in json.loads(ids)}

    def intents(self) -> list[Intent]:
        """Intents no batch recorded: work a crash interrupted."""
        return [Intent(i, json.loads(s), json.loads(c))
                for i, s, c in self._db.execute("SELECT id, sources, chunk_ids FROM intents ORDER BY id")]

    def journal(self, after: int) -> list[tuple[int, str, str]]:
        """Journal rows (seq, chunk id, 'add' | 'del') after seq `after`, in order."""
        return [(int(s), str(c), str(o)) for s, c, o in self._db.execute(
            "SELECT seq, chunk_id, op FROM journal WHERE seq > ? ORDER BY seq", (after,))]

    def last_seq(self) -> int:
        """Highest journal seq ever written (0 when none)."""
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'journal'").fetchone()
        return int(row[0]) if row else 0

    # ----------------------------------------------------------------------------------- writes

    def write_intent(self, sources: list[str], chunk_ids: list[str]) -> int:
        """Announce the chunk ids a batch will write or delete; returns the intent id."""
        with self._transaction() as db:
            cursor = db.execute("INSERT INTO intents (sources, chunk_ids) VALUES (?, ?)",
                                (json.dumps(sources), json.dumps(chunk_ids)))
        return int(cursor.lastrowid or 0)

    def record(
        self,
        entries: dict[str, SourceEntry],
        *,
        dropped: Iterable[str] = (),
        deleted_ids: Iterable[str] = (),
        added_ids: Iterable[str] = (),
        intent: int | None = None,
    ) -> None:
        """One batch in one transaction: new entries, dropped sources, journal, intent cleared."""
        with self._transaction() as db:
            gone = [*entries, *dropped]
            change = sum(len(e.chunk_ids()) for e in entries.values())
            for part in _chunks(gone):
                marks = ",".join("?" * len(part))
                change -= db.execute(f"SELECT COALESCE(SUM(chunks), 0) FROM sources "
                                     f"WHERE source_id IN ({marks})", part).fetchone()[0]
                db.execute(f"DELETE FROM docs WHERE source_id IN ({marks})", part)
                db.execute(f"DELETE FROM sources WHERE source_id IN ({marks})", part)
            crashpoint("manifest.record")
            self._put_sources(db, entries)
            db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = ?",
                       (change, TOTAL_KEY))
            db.executemany("INSERT INTO journal (chunk_id, op) VALUES (?, 'del')",
                           ((cid,) for cid in deleted_ids))
            db.executemany("INSERT INTO journal (chunk_id, op) VALUES (?, 'add')",
                           ((cid,) for cid in added_ids))
            if intent is not None:
                db.execute("DELETE FROM intents WHERE id = ?", (intent,))

    @staticmethod
    def _put_sources(db: sqlite3.Connection, entries: dict[str, SourceEntry]) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ((sid, e.identity, e.content_hash, e.size, e.mtime_ns, len(e.docs), len(e.chunk_ids()),
              e.recorded_at) for sid, e in entries.items()),
        )
        db.executemany(
            "INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?)",
            ((sid, doc_id, d.content_hash, json.dumps(d.chunk_ids))
             for sid, e in entries.items() for doc_id, d in e.docs.items()),
        )

    def touch(self, stats: dict[str, tuple[int, int]]) -> None:
        """Store a new (size, mtime_ns) for sources whose bytes were read and found unchanged."""
        if stats:
            with self._transaction() as db:
                db.executemany("UPDATE sources SET size = ?, mtime_ns = ? WHERE source_id = ?",
                               ((size, mtime, sid) for sid, (size, mtime) in stats.items()))

    def clear_intent(self, intent: int, *, dropped: Iterable[str] = (),
                     deleted_ids: Iterable[str] = ()) -> None:
        """Settle an interrupted intent: forget its sources, journal its ids deleted, clear it."""
        self.record({}, dropped=dropped, deleted_ids=deleted_ids, intent=intent)

    def trim_journal(self, upto: int) -> None:
        """Forget journal rows the BM25 index has applied (seq ≤ upto)."""
        with self._transaction() as db:
            db.execute("DELETE FROM journal WHERE seq <= ?", (upto,))

    def reset_sources(self, entries: dict[str, SourceEntry]) -> None:
        """Replace every source (full repair), clear intents, keep the journal sequence."""
        with self._transaction() as db:
            db.execute("DELETE FROM docs")
            db.execute("DELETE FROM sources")
            db.execute("DELETE FROM intents")
            self._put_sources(db, entries)
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       (TOTAL_KEY, str(sum(len(e.chunk_ids()) for e in entries.values()))))

    def all_entries(self) -> dict[str, SourceEntry]:
        """Every source with its documents (full repairs only)."""
        return self.entries(self.source_ids())


class _Transaction:
    """`with store._transaction() as db:` — BEGIN IMMEDIATE … COMMIT, ROLLBACK on error."""

    def __init__(self, store: ManifestStore) -> None:
        self._store = store

    def __enter__(self) -> sqlite3.Connection:
        self._store._lock.acquire()
        self._store._db.execute("BEGIN IMMEDIATE")
        return self._store._db

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            self._store._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._store._lock.release()


def write_atomic(path: Path, data: str) -> None:
    """Replace path with data: temp file beside it, fsync, rename, then fsync the directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_path(path.parent)


def fsync_path(path: Path) -> None:
    """Flush a file, or a directory's entries (renames, new files), to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_temp_files(directory: Path) -> list[str]:
    """Delete `write_atomic` leftovers (`.NAME.*.tmp`) in directory; return their names."""
    if not directory.is_dir():
        return []
    removed = []
    for leftover in directory.glob(".*.tmp"):
        leftover.unlink(missing_ok=True)
        removed.append(leftover.name)
    return removed
