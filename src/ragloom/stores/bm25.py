"""BM25 index of one collection: immutable segments plus tombstones, with exact global statistics.

Layout of `bm25/<collection>/`:

- `CURRENT.json` — the commit point, replaced atomically: the live segments, the tombstone files,
  the manifest journal seq applied and the chunk count.
- `seg-<gen>/` — one immutable segment: postings over the segment's own vocabulary (CSC: per term
  the document slots and raw term frequencies), document lengths and the chunks themselves.
- `del-<gen>.json` — chunk ids deleted by commit `<gen>`: they hide copies in older segments.

An update writes one small segment and one tombstone file and swaps CURRENT, so its cost follows
the change. Scores are computed at query time from the live chunks only (their number, each term's
document frequency and the average length), with bm25s's tokenizer and its Lucene BM25 formula, so
after any sequence of updates they equal those of a full rebuild. Segments are merged when there
are too many (the newest deltas, size-tiered) or when deltas and tombstones pass a share of the
base (everything).
Readers load CURRENT and the files it names, reusing segments they already hold: a snapshot is
immutable, so one query never mixes two states.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer
from pydantic import TypeAdapter

from ragloom.state import Chunk, ScoredChunk
from ragloom.stores.base import Filter
from ragloom.stores.crashpoints import crashpoint
from ragloom.stores.filters import compile_where, filterable_metadata
from ragloom.stores.manifest import fsync_path, write_atomic

logger = logging.getLogger(__name__)

FORMAT = 2
CURRENT_FILE = "CURRENT.json"
LEGACY_META = "meta.json"  # format 1: one bm25s model rebuilt on every change
POSTINGS_FILE = "postings.npz"
CHUNKS_FILE = "chunks.json"
VOCAB_FILE = "vocab.json"
K1, B = 1.5, 0.75  # bm25s defaults (method "lucene")
MAX_SEGMENTS = 8
"""More live segments than this merges the newest deltas into one (see TIER_RATIO)."""
TIER_RATIO = 2
"""A delta merge also takes an older delta when it is at most this many times what it takes."""
MERGE_RATIO = 0.25
"""Deltas plus tombstones above this share of the base's size rewrite everything into one base."""
MASK_CACHE_SIZE = 32
_local = threading.local()
_CHUNKS = TypeAdapter(list[Chunk])


class CorruptIndexError(ValueError):
    """The persisted index cannot be read back as written (an ingest rebuilds it from the store)."""


def ids_revision(ids: Iterable[str]) -> str:
    """Revision of a set of chunk ids: sha256 of the sorted ids, one per line."""
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


def stemmer() -> Stemmer.Stemmer:
    """The English stemmer of this thread (stemmer objects are not shared across threads); the BM25
    tokens and the query nodes' overlap tokens both stem with it."""
    if not hasattr(_local, "stemmer"):
        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def tokenize_texts(texts: list[str]) -> list[list[str]]:
    """Tokens of each text: lowercase, English stopwords removed, stemmed (bm25s's tokenizer)."""
    if not texts:
        return []
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer(), return_ids=False,
                            show_progress=False)
    return [list(doc) for doc in tokens]


def query_tokens(query: str) -> list[str]:
    """Tokens of a query, produced exactly as the corpus tokens are."""
    return [t for t in tokenize_texts([query])[0] if t]


# -------------------------------------------------------------------------------------- segments


@dataclass
class Segment:
    """One immutable segment: postings over its own vocabulary, document lengths, its chunks."""

    name: str
    gen: int
    vocab: dict[str, int]
    indptr: np.ndarray
    indices: np.ndarray
    tf: np.ndarray
    doc_len: np.ndarray
    chunks: list[Chunk]

    @classmethod
    def from_chunks(cls, name: str, gen: int, chunks: list[Chunk]) -> Segment:
        """Tokenize chunks and lay out their postings (term-major, documents ascending)."""
        docs = tokenize_texts([c.text for c in chunks])
        vocab: dict[str, int] = {}
        term_ids = [vocab.setdefault(t, len(vocab)) for doc in docs for t in doc]
        doc_len = np.fromiter((len(d) for d in docs), dtype=np.float32, count=len(docs))
        doc_ids = np.repeat(np.arange(len(docs), dtype=np.int64), doc_len.astype(np.int64))
        keys = np.asarray(term_ids, dtype=np.int64) * max(len(docs), 1) + doc_ids
        unique, counts = np.unique(keys, return_counts=True)
        terms = unique // max(len(docs), 1)
        indptr = np.searchsorted(terms, np.arange(len(vocab) + 1)).astype(np.int64)
        indices = (unique % max(len(docs), 1)).astype(np.int32)
        return cls(name, gen, vocab, indptr, indices, counts.astype(np.float32), doc_len, chunks)

    def write(self, directory: Path) -> None:
        """Persist into directory/name atomically (staging directory, fsync, rename)."""
        staging = Path(tempfile.mkdtemp(prefix=f".{self.name}.tmp-", dir=directory))
        try:
            np.savez(staging / POSTINGS_FILE, indptr=self.indptr, indices=self.indices, tf=self.tf,
                     doc_len=self.doc_len)
            vocab = sorted(self.vocab, key=self.vocab.__getitem__)
            (staging / VOCAB_FILE).write_text(json.dumps(vocab), encoding="utf-8")
            (staging / CHUNKS_FILE).write_bytes(_CHUNKS.dump_json(self.chunks))
            for path in [*staging.iterdir(), staging]:
                fsync_path(path)
            crashpoint("bm25.segment")
            os.replace(staging, directory / self.name)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    @classmethod
    def read(cls, directory: Path, name: str) -> Segment:
        """Load a segment written by `write`; CorruptIndexError when its files disagree."""
        path = directory / name
        try:
            with np.load(path / POSTINGS_FILE) as arrays:
                indptr, indices = arrays["indptr"], arrays["indices"]
                tf, doc_len = arrays["tf"], arrays["doc_len"]
            vocab_list = json.loads((path / VOCAB_FILE).read_text(encoding="utf-8"))
            chunks = _CHUNKS.validate_json((path / CHUNKS_FILE).read_bytes())
        except FileNotFoundError:
            raise
        except Exception as exc:  # any damage means "repair", never a crash
            raise CorruptIndexError(f"segment {name}: {exc}") from exc
        if (
            len(indptr) != len(vocab_list) + 1
            or len(doc_len) != len(chunks)
            or len(indices) != len(tf)
            or (len(indptr) and int(indptr[-1]) != len(indices))
            or (len(indices) and int(indices.max()) >= len(chunks))
        ):
            raise CorruptIndexError(f"segment {name}: postings, vocabulary and chunks disagree")
        vocab = {term: i for i, term in enumerate(vocab_list)}
        return cls(name, _gen_of(name), vocab, indptr, indices, tf, doc_len, chunks)


def _gen_of(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


def _read_current(directory: Path) -> dict[str, Any] | None:
    """The commit point, None when there is none; CorruptIndexError when it is unreadable."""
    try:
        text = (directory / CURRENT_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        if (directory / LEGACY_META).exists():
            raise CorruptIndexError("format 1 index (one bm25s model): rebuild it") from None
        return None
    try:
        current = json.loads(text)
        if current.get("format") != FORMAT:
            raise ValueError(f"unknown format {current.get('format')!r}")
        for key in ("segments", "tombstones", "applied_seq", "count", "generation"):
            current[key]  # noqa: B018 - presence check
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptIndexError(f"{CURRENT_FILE}: {exc}") from exc
    return current


def _read_tombstones(directory: Path, names: Sequence[str]) -> list[tuple[int, list[str]]]:
    out = []
    for name in names:
        try:
            ids = json.loads((directory / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise
        except ValueError as exc:
            raise CorruptIndexError(f"{name}: {exc}") from exc
        out.append((_gen_of(name.removesuffix(".json")), ids))
    return out


def _resolve(segments: Sequence[Segment],
             tombstones: Sequence[tuple[int, list[str]]]) -> tuple[np.ndarray, dict[str, int]]:
    """Alive mask over all slots and the slot of each live id: newest copy wins, tombstones hide
    copies in segments older than the commit that deleted them."""
    location: dict[str, int] = {}
    gens = np.concatenate([np.full(len(s.chunks), s.gen, dtype=np.int64) for s in segments]) \
        if segments else np.zeros(0, dtype=np.int64)
    slot = 0
    for segment in segments:
        for chunk in segment.chunks:
            location[chunk.id] = slot
            slot += 1
    for gen, ids in tombstones:
        for chunk_id in ids:
            found = location.get(chunk_id)
            if found is not None and gens[found] < gen:
                del location[chunk_id]
    alive = np.zeros(slot, dtype=bool)
    alive[list(location.values())] = True
    return alive, location


# -------------------------------------------------------------------------------------- snapshot


class Bm25Index:
    """One immutable snapshot of a collection's BM25 index; search in about a millisecond."""

    def __init__(self, segments: list[Segment], tombstones: list[tuple[int, list[str]]],
                 current: dict[str, Any] | None = None) -> None:
        self._segments = segments
        self._tombstones = tombstones
        self.current = current or {}
        self._offsets = np.cumsum([0, *[len(s.chunks) for s in segments]])
        self._alive, self._location = _resolve(segments, tombstones)
        self._all = [c for s in segments for c in s.chunks]
        doc_len = (np.concatenate([s.doc_len for s in segments]) if segments
                   else np.zeros(0, dtype=np.float32))
        self._n = int(self._alive.sum())
        avgdl = float(doc_len[self._alive].mean()) if self._n else 1.0
        norm = (K1 * ((1 - B) + B * doc_len / (avgdl or 1.0))).astype(np.float32)
        # the term-frequency part of every posting under this snapshot's average length: a query
        # then only multiplies by each term's idf (computed from the live document frequency)
        self._tfc = [s.tf / (norm[offset + s.indices] + s.tf)
                     for s, offset in zip(segments, self._offsets, strict=False)]
        self._dead_in = [bool((~self._alive[a:b]).any())
                         for a, b in zip(self._offsets[:-1], self._offsets[1:], strict=True)]
        self._weights: np.ndarray | None = None
        if len(segments) == 1 and not self._dead_in[0]:  # after a build or a full merge
            df = np.diff(segments[0].indptr)  # every posting is live: df is the column length
            idf = np.log1p((self._n - df + 0.5) / (df + 0.5)).astype(np.float32)
            self._weights = np.repeat(idf, df) * self._tfc[0]
        self._metadata: list[dict[str, Any]] | None = None
        self._masks: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------ persistence

    @classmethod
    def build(cls, chunks: list[Chunk], directory: Path, *, applied_seq: int = 0, epoch: str = "",
              before_commit: Callable[[], None] | None = None) -> Bm25Index:
        """Index chunks into one base segment, replacing whatever the directory held; readers
        switch at the commit. `before_commit` runs once the segment is on disk (a reindex swaps
        its collection in there, so the two switches are milliseconds apart)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        gen = _next_gen(directory, _safe_current(directory))
        segment = Segment.from_chunks(f"seg-{gen:06d}", gen, chunks)
        segment.write(directory)
        fsync_path(directory)
        if before_commit is not None:
            before_commit()
        current = _current(gen, [segment.name], [], applied_seq, len(chunks), epoch)
        _commit(directory, current)
        remove_unreferenced(directory)
        return cls([segment], [], current)

    @classmethod
    def open(cls, directory: Path, previous: Bm25Index | None = None) -> Bm25Index | None:
        """Load the committed snapshot, reusing the segments `previous` holds; None when there is
        no index, CorruptIndexError when there is one that cannot be read."""
        directory = Path(directory)
        for _attempt in range(3):  # a merge may delete files between CURRENT and their reading
            current = _read_current(directory)
            if current is None:
                return None
            known = {s.name: s for s in previous._segments} if previous is not None else {}
            try:
                segments = [known.get(name) or Segment.read(directory, name)
                            for name in current["segments"]]
                tombstones = _read_tombstones(directory, current["tombstones"])
            except FileNotFoundError:
                continue
            index = cls(segments, tombstones, current)
            if len(index) != current["count"]:
                raise CorruptIndexError(
                    f"{len(index)} live chunks, {CURRENT_FILE} says {current['count']}")
            return index
        raise CorruptIndexError("files named by CURRENT.json keep disappearing")

    @classmethod
    def load(cls, directory: Path) -> Bm25Index | None:
        """Load a persisted index; None when it is missing or unreadable (then rebuild it)."""
        try:
            return cls.open(directory)
        except (CorruptIndexError, OSError) as exc:
            logger.warning("BM25 index at %s is unreadable and will be rebuilt: %s", directory, exc)
            return None

    # ----------------------------------------------------------------------------------- reading

    @property
    def revision(self) -> str:
        """`ids_revision` of the indexed chunk ids; compare it with the document index's ids."""
        return ids_revision(self._location)

    @property
    def ids(self) -> list[str]:
        """Ids of the live chunks, in slot order."""
        return [self._all[slot].id for slot in sorted(self._location.values())]

    def lookup(self, ids: Iterable[str]) -> dict[str, Chunk]:
        """The indexed chunks among ids, by id (ids not indexed are left out)."""
        return {i: self._all[self._location[i]] for i in ids if i in self._location}

    def __len__(self) -> int:
        """Number of live chunks."""
        return self._n

    def vocabulary_coverage(self, query: str) -> float | None:
        """Share of the query's terms (stemmed, stopwords out) the index knows; None when the
        query has no such term."""
        tokens = list(dict.fromkeys(query_tokens(query)))
        if not tokens:
            return None
        known = sum(any(t in segment.vocab for segment in self._segments) for t in tokens)
        return known / len(tokens)

    def search(self, query: str, k: int, where: Filter | None = None) -> list[ScoredChunk]:
        """Return up to k live chunks with a positive BM25 score, best first (origin `bm25`)."""
        mask = self._mask(where)
        if k <= 0 or self._n == 0:
            return []
        scores = np.zeros(len(self._all), dtype=np.float32)
        terms = query_tokens(query)
        if self._weights is not None:
            matched = self._add_precomputed(terms, scores, self._weights)
        else:
            matched = self._add_computed(terms, scores)
        if not matched:
            return []
        if mask is not None:
            scores *= mask
        return [
            ScoredChunk(chunk=self._all[i], score=float(scores[i]), score_origin="bm25")
            for i in _top_positive(scores, min(k, self._n))
        ]

    def _add_precomputed(self, terms: list[str], scores: np.ndarray, weights: np.ndarray) -> bool:
        """One clean segment (after a build or a full merge): whole scores stored per posting."""
        segment, matched = self._segments[0], False
        for term in terms:
            column = segment.vocab.get(term)
            if column is not None:
                start, end = segment.indptr[column], segment.indptr[column + 1]
                np.add.at(scores, segment.indices[start:end], weights[start:end])  # scatter-add
                matched = True
        return matched

    def _add_computed(self, terms: list[str], scores: np.ndarray) -> bool:
        """Segments and tombstones: each term's idf from its live document frequency."""
        matched = False
        for term in terms:
            postings = self._postings(term)
            if postings is None:
                continue
            slots, tfc = postings
            df = len(slots)
            idf = np.float32(math.log(1 + (self._n - df + 0.5) / (df + 0.5)))
            np.add.at(scores, slots, idf * tfc)  # numpy's scatter-add: faster than `+=` on a gather
            matched = True
        return matched

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Live (global slots, term-frequency parts) of a term over every segment."""
        parts_slots, parts_tf = [], []
        for segment, offset, dead, tfc in zip(self._segments, self._offsets, self._dead_in,
                                               self._tfc, strict=False):
            column = segment.vocab.get(term)
            if column is None:
                continue
            start, end = segment.indptr[column], segment.indptr[column + 1]
            slots, tf = segment.indices[start:end], tfc[start:end]
            if offset:
                slots = slots + offset
            if dead:
                live = self._alive[slots]
                slots, tf = slots[live], tf[live]
            parts_slots.append(slots)
            parts_tf.append(tf)
        if not parts_slots:
            return None
        slots = parts_slots[0] if len(parts_slots) == 1 else np.concatenate(parts_slots)
        if not len(slots):
            return None
        return slots, parts_tf[0] if len(parts_tf) == 1 else np.concatenate(parts_tf)

    def _mask(self, where: Filter | None) -> np.ndarray | None:
        """0/1 weights of the chunks matching the filter, cached per filter."""
        predicate = compile_where(where)
        if not where:
            return None
        key = json.dumps(where, sort_keys=True, default=str)
        with self._lock:
            if key in self._masks:
                self._masks.move_to_end(key)
                return self._masks[key]
            if self._metadata is None:
                self._metadata = [filterable_metadata(c) for c in self._all]
            metadata = self._metadata
        mask = np.fromiter(map(predicate, metadata), dtype=bool, count=len(metadata))
        weights = mask.astype(np.float32)
        with self._lock:
            self._masks[key] = weights
            while len(self._masks) > MASK_CACHE_SIZE:
                self._masks.popitem(last=False)
        return weights

    def live_chunks(self) -> list[Chunk]:
        """The live chunks, in slot order (used by merges)."""
        return [self._all[slot] for slot in sorted(self._location.values())]


def _top_positive(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k highest positive scores, best first (ties by index)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = np.lexsort((positive, -scores[positive]))
    return [int(i) for i in positive[order]]


# --------------------------------------------------------------------------------------- writing


def _current(gen: int, segments: list[str], tombstones: list[str], applied_seq: int, count: int,
             epoch: str) -> dict[str, Any]:
    return {"format": FORMAT, "generation": gen, "segments": segments, "tombstones": tombstones,
            "applied_seq": applied_seq, "count": count, "epoch": epoch}


def _commit(directory: Path, current: dict[str, Any]) -> None:
    crashpoint("bm25.commit")
    write_atomic(directory / CURRENT_FILE, json.dumps(current, indent=1))


def _next_gen(directory: Path, current: dict[str, Any] | None) -> int:
    """A generation above the committed one and above any file a crash left behind."""
    names = [p.name.removesuffix(".json") for p in directory.iterdir()
             if p.name.startswith(("seg-", "del-"))]
    found = [_gen_of(n) for n in names if n.rsplit("-", 1)[1].isdigit()]
    return max([int(current["generation"]) if current else 0, *found]) + 1


def _safe_current(directory: Path) -> dict[str, Any] | None:
    try:
        return _read_current(directory)
    except CorruptIndexError:
        return None


def read_state(directory: Path) -> dict[str, Any] | None:
    """The committed CURRENT.json (None when missing); CorruptIndexError when unreadable or when a
    file it names is missing. Cheap: reads no postings."""
    directory = Path(directory)
    current = _read_current(directory)
    if current is None:
        return None
    for name in [*current["segments"], *current["tombstones"]]:
        if not (directory / name).exists():
            raise CorruptIndexError(f"{name}, named by {CURRENT_FILE}, is missing")
    return current


@dataclass
class UpdateResult:
    """What `update` did: the new generation, chunks added and deleted, whether it merged."""

    generation: int
    added: int
    deleted: int
    merged: str = "none"
    detail: dict[str, Any] = field(default_factory=dict)


def update(directory: Path, added: list[Chunk], deleted: Sequence[str], *, applied_seq: int,
           count: int, epoch: str) -> UpdateResult:
    """Commit one change: a segment with the added chunks, a tombstone file with the deleted ids
    (they hide older copies; an id both deleted and added stays, in the new segment), then merge
    when the policy says so. `count` is the number of live chunks after the change."""
    directory = Path(directory)
    current = read_state(directory)
    if current is None:
        raise CorruptIndexError("no index to update")
    gen = _next_gen(directory, current)
    segments, tombstones = list(current["segments"]), list(current["tombstones"])
    if added:
        segment = Segment.from_chunks(f"seg-{gen:06d}", gen, added)
        segment.write(directory)
        segments.append(segment.name)
    if deleted:
        name = f"del-{gen:06d}.json"
        write_atomic(directory / name, json.dumps(sorted(set(deleted))))
        tombstones.append(name)
    fsync_path(directory)
    new = _current(gen, segments, tombstones, applied_seq, count, epoch)
    _commit(directory, new)
    result = UpdateResult(gen, len(added), len(deleted))
    result.merged = _maybe_merge(directory, new)
    return result


def _sizes(directory: Path, current: dict[str, Any]) -> tuple[list[int], int]:
    """(slots of each segment, base first; tombstoned ids) from the files' headers."""
    slots = []
    for name in current["segments"]:
        with np.load(directory / name / POSTINGS_FILE) as arrays:
            slots.append(len(arrays["doc_len"]))
    tombs = sum(len(ids) for _gen, ids in _read_tombstones(directory, current["tombstones"]))
    return slots, tombs


def _tail(deltas: list[int]) -> int:
    """How many of the newest deltas a merge rewrites: the two newest, then each older one no
    bigger than TIER_RATIO times what is taken so far (size-tiered: a big delta waits until the
    small ones add up to it, so a chunk is rewritten O(log) times, not on every merge)."""
    take, size = 2, deltas[-1] + deltas[-2]
    while take < len(deltas) and deltas[-take - 1] <= TIER_RATIO * size:
        size += deltas[-take - 1]
        take += 1
    return take


def _maybe_merge(directory: Path, current: dict[str, Any]) -> str:
    """Apply the merge policy after a commit: "all", "deltas" or "none"."""
    slots, tombs = _sizes(directory, current)
    base, deltas = (slots[0] if slots else 0), slots[1:]
    if sum(deltas) + tombs > MERGE_RATIO * max(base, 1) and (deltas or tombs):
        index = Bm25Index.open(directory)
        assert index is not None
        Bm25Index.build(index.live_chunks(), directory, applied_seq=current["applied_seq"],
                        epoch=current["epoch"])
        return "all"
    if len(current["segments"]) > MAX_SEGMENTS:
        _merge_deltas(directory, current, _tail(deltas))
        return "deltas"
    return "none"


def _merge_deltas(directory: Path, current: dict[str, Any], take: int) -> None:
    """Rewrite the `take` newest segments as one, keeping the tombstones (they still hide copies
    in the older segments); the merged segment takes a new generation, so later tombstones apply."""
    names = current["segments"][-take:]
    deltas = [Segment.read(directory, name) for name in names]
    tombstones = _read_tombstones(directory, current["tombstones"])
    alive, location = _resolve(deltas, tombstones)
    everything = [c for s in deltas for c in s.chunks]
    keep = [everything[slot] for slot in sorted(location.values()) if alive[slot]]
    gen = _next_gen(directory, current)
    merged = Segment.from_chunks(f"seg-{gen:06d}", gen, keep)
    merged.write(directory)
    fsync_path(directory)
    crashpoint("bm25.merge")
    new = dict(current, generation=gen, segments=[*current["segments"][:-take], merged.name])
    _commit(directory, new)
    remove_unreferenced(directory)


def remove_unreferenced(directory: Path) -> list[str]:
    """Delete segments, tombstone files and staging leftovers CURRENT does not name (crash
    leftovers and merged-away files); return their names. Writers call it under the lock."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    current = _safe_current(directory)
    referenced = set(current["segments"]) | set(current["tombstones"]) if current else set()
    removed = []
    for path in directory.iterdir():
        name = path.name
        stale = (name.startswith(("seg-", "del-")) and name not in referenced) or (
            name.startswith(".") and ".tmp" in name)
        if stale:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(name)
    return removed
