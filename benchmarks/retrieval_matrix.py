"""The ranking matrix behind `benchmarks/retrieval.py --matrix`: every fusion variant on every
dataset and chunking we can build, plus the shipped profiles through the real graph.

Collections (all under bench-out/data, ingested incrementally; the generated files live under
bench-out/gen and are never committed):

- `scifact` natural chunks (recursive 1000/150), `scifact-sent` sentence-size chunks (the
  `100k` scale: sentence chunker, size 100), `scifact-doc` one chunk per abstract (recursive,
  size 20000, no overlap): SciFact train, 809 queries.
- `hotpotqa`: the 40 two-hop questions over their 400 paragraphs (one chunk each); both-gold@5
  as well as nDCG@10.
- `csv-rows`: 1,500 SciFact abstracts (the 565 judged for train plus 935 others drawn with a
  fixed seed) written as CSV rows `title,abstract` (15 files of 100 rows; `csv_mode: row`, so each
  row is a document; long rows are chunked like any document).
- `mixed`: the same 1,500 abstracts, half as sections of 75 long Markdown documents (10
  abstracts each, `# Topic n` + `## <title>` + abstract; grouped by nearest neighbours of their
  whole-abstract embeddings so a long document is about one topic, as real long documents are),
  half as one-row CSV documents; judged and other abstracts are split alike. A Markdown chunk
  counts for the abstract it overlaps most. The `csv` column reports the queries whose judged
  abstracts are all CSV rows (the case where sibling evidence pushed one long document's chunks
  above the single-row answers).

For the variants, each query's dense (MiniLM cosine) and BM25 (bm25s) candidate lists are
computed once through ragloom's own index objects (`resources.rag_deps`), then fused in process
with the functions of `ragloom.nodes.fusion_math`; documents are ranked by their best chunk. The
profile rows run `ragloom.runner.retrieve` (the whole retrieval graph) and give the latency.
"""

from __future__ import annotations

import csv
import json
import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, corpus_id, dataset, load_queries, percentile, read_jsonl

OUT = ROOT / "bench-out"
DATA_DIR = OUT / "data"
GEN = OUT / "gen"
DEPTH = 100
"""Candidates per leg and fused (balanced's candidate_k)."""
SEED = 13
SUBSET = 1500
ROWS_PER_FILE = 100
SECTIONS_PER_DOC = 10
Mapper = Callable[[Any], str | None]


@dataclass
class Collection:
    """One dataset and chunking: its collection, queries, judgments and chunk → unit mapping."""

    name: str
    collection: str
    sources: list[str]
    chunker: dict[str, Any] | None
    queries: list[tuple[str, str]]
    qrels: dict[str, dict[str, int]]
    mapper: Mapper
    ingest: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, set[str]] = field(default_factory=dict)


def _subset(root: Path, qrels: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """The judged abstracts plus others drawn with a fixed seed, SUBSET in all, in corpus order."""
    corpus = read_jsonl(root / "corpus.jsonl")
    judged = {d for docs in qrels.values() for d in docs}
    others = [str(d["_id"]) for d in corpus if str(d["_id"]) not in judged]
    random.Random(SEED).shuffle(others)
    keep = judged | set(others[: SUBSET - len(judged)])
    return [d for d in corpus if str(d["_id"]) in keep]


def _write_csv(path: Path, docs: Sequence[dict[str, Any]]) -> dict[str, str]:
    """One CSV file of `title,abstract` rows; returns {row key: corpus id}."""
    rows: dict[str, str] = {}
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["title", "abstract"])
        for n, doc in enumerate(docs, start=1):
            writer.writerow([doc["title"], doc["text"]])
            rows[f"{path.resolve()}#row={n}"] = str(doc["_id"])
    return rows


def _generated(name: str, write: Callable[[Path], Any]) -> tuple[list[str], Any]:
    """A generated folder under bench-out/gen, written once: (its path as the source, its index)."""
    folder = GEN / name
    index_file = folder / "index.json"
    if not index_file.exists():
        folder.mkdir(parents=True, exist_ok=True)
        index_file.write_text(json.dumps(write(folder)))
    return [str(folder)], json.loads(index_file.read_text())


def build_csv_rows(root: Path, qrels: dict) -> tuple[list[str], dict[str, str]]:
    """The csv-rows files; returns the sources and the row → abstract map."""
    def write(folder: Path) -> dict[str, str]:
        docs = _subset(root, qrels)
        rows: dict[str, str] = {}
        for i in range(0, len(docs), ROWS_PER_FILE):
            rows.update(_write_csv(folder / f"part-{i // ROWS_PER_FILE:02d}.csv",
                                   docs[i:i + ROWS_PER_FILE]))
        return rows
    return _generated("csv-rows", write)


def _topic_groups(ids: list[str], vectors: np.ndarray) -> list[list[int]]:
    """Greedy nearest-neighbour groups of SECTIONS_PER_DOC: a seed and its closest unassigned."""
    free = np.ones(len(ids), dtype=bool)
    similarity = vectors @ vectors.T
    groups = []
    for seed in range(len(ids)):
        if not free[seed]:
            continue
        free[seed] = False
        order = [int(i) for i in np.argsort(-similarity[seed]) if free[i]]
        members = [seed, *order[: SECTIONS_PER_DOC - 1]]
        free[members] = False
        groups.append(members)
    return groups


def build_mixed(root: Path, qrels: dict, doc_vectors: Callable[[list[str]], np.ndarray]
                ) -> tuple[list[str], dict[str, Any]]:
    """The mixed collection: long Markdown documents + one-row CSV documents."""
    return _generated("mixed", lambda folder: _write_mixed(folder, root, qrels, doc_vectors))


def _write_mixed(folder: Path, root: Path, qrels: dict,
                 doc_vectors: Callable[[list[str]], np.ndarray]) -> dict[str, Any]:
    """Write the mixed files; return {sections: {path: [[start, end, abstract]]}, rows: {...}}."""
    docs = _subset(root, qrels)
    judged = {d for ds in qrels.values() for d in ds}
    rng = random.Random(SEED + 1)
    to_markdown: list[dict[str, Any]] = []
    to_csv: list[dict[str, Any]] = []
    for group in ([d for d in docs if str(d["_id"]) in judged],
                  [d for d in docs if str(d["_id"]) not in judged]):
        shuffled = list(group)
        rng.shuffle(shuffled)
        half = len(shuffled) // 2
        to_markdown += shuffled[:half]
        to_csv += shuffled[half:]
    ids = [str(d["_id"]) for d in to_markdown]
    by_id = {str(d["_id"]): d for d in to_markdown}
    sections: dict[str, list[list[Any]]] = {}
    for n, members in enumerate(_topic_groups(ids, doc_vectors(ids)), start=1):
        path = folder / f"topic-{n:03d}.md"
        text, spans = f"# Topic {n}\n\n", []
        for i in members:
            doc = by_id[ids[i]]
            start = len(text)
            text += f"## {doc['title']}\n\n{doc['text']}\n\n"
            spans.append([start, len(text), ids[i]])
        path.write_text(text, encoding="utf-8")
        sections[str(path.resolve())] = spans
    rows: dict[str, str] = {}
    for i in range(0, len(to_csv), ROWS_PER_FILE):
        rows.update(_write_csv(folder / f"rows-{i // ROWS_PER_FILE:02d}.csv",
                               to_csv[i:i + ROWS_PER_FILE]))
    return {"sections": sections, "rows": rows}


def row_mapper(rows: dict[str, str]) -> Mapper:
    """A chunk of a CSV row → the abstract written in that row."""
    def unit(chunk: Any) -> str | None:
        return rows.get(chunk.doc_id)
    return unit


def mixed_mapper(index: dict[str, Any]) -> Mapper:
    """A Markdown chunk → the abstract it overlaps most; a CSV row chunk → its abstract."""
    rows = row_mapper(index["rows"])
    sections = index["sections"]

    def unit(chunk: Any) -> str | None:
        spans = sections.get(chunk.source_id)
        if spans is None:
            return rows(chunk)
        overlap = [(min(chunk.end, end) - max(chunk.start, start), doc) for start, end, doc in spans]
        best, doc = max(overlap)
        return doc if best > 0 else None
    return unit


def collections(names: Sequence[str], limit: int | None) -> list[Collection]:
    """The requested collections with their queries; generated files are written on first use."""
    scifact = dataset("scifact")
    sq, sqrels = load_queries(scifact, "train", limit)
    hotpot = dataset("hotpotqa")
    hq, hqrels = load_queries(hotpot, "test", None)
    beir = lambda chunk: corpus_id(chunk.id)
    corpus = [str(scifact / "corpus.jsonl")]
    found: list[Collection] = []
    for name in names:
        match name:
            case "scifact":
                found.append(Collection(name, "scifact", corpus, None, sq, sqrels, beir))
            case "scifact-sent":
                found.append(Collection(name, "scifact-100k", corpus,
                                        {"name": "sentence", "size": 100, "overlap": 0},
                                        sq, sqrels, beir))
            case "scifact-doc":
                found.append(Collection(name, "scifact-doc", corpus,
                                        {"name": "recursive", "size": 20000, "overlap": 0},
                                        sq, sqrels, beir))
            case "hotpotqa":
                found.append(Collection(name, "hotpotqa", [str(hotpot / "corpus.jsonl")], None,
                                        hq, hqrels, beir))
            case "csv-rows":
                _, full_qrels = load_queries(scifact, "train", None)
                sources, rows = build_csv_rows(scifact, full_qrels)
                found.append(Collection(name, "scifact-csv", sources, None, sq, sqrels,
                                        row_mapper(rows)))
            case "mixed":
                _, full_qrels = load_queries(scifact, "train", None)
                sources, index = build_mixed(scifact, full_qrels, _doc_vectors)
                in_csv = set(index["rows"].values())
                csv_queries = {q for q, docs in sqrels.items() if set(docs) <= in_csv}
                found.append(Collection(name, "scifact-mixed", sources, None, sq, sqrels,
                                        mixed_mapper(index), groups={"csv": csv_queries}))
            case _:
                raise SystemExit(f"unknown matrix collection {name!r}")
    return found


def _doc_vectors(ids: list[str]) -> np.ndarray:
    """Whole-abstract embeddings from the scifact-doc collection (ingested first)."""
    from ragloom import resources
    from ragloom.settings import load_settings

    settings = load_settings("balanced", data_dir=DATA_DIR, collection="scifact-doc")
    index = resources.document_index(settings)
    by_doc: dict[str, np.ndarray] = {}
    chunks = index.all_chunks()
    vectors = index.get_embeddings([c.id for c in chunks])
    for chunk in chunks:
        by_doc[corpus_id(chunk.id)] = np.asarray(vectors[chunk.id], dtype=np.float32)
    return np.stack([by_doc[i] for i in ids])


def settings_for(profile: str, spec: Collection, **extra: Any) -> Any:
    """A profile's settings over one matrix collection (its chunker for the ingest)."""
    from ragloom.settings import load_settings

    layer = {"chunker": spec.chunker} if spec.chunker else {}
    return load_settings(profile, data_dir=DATA_DIR, collection=spec.collection, **layer, **extra)


def ingest(spec: Collection) -> None:
    """Ingest the collection's sources incrementally (unchanged sources cost nothing)."""
    from ragloom import resources
    from ragloom.runner import ingest as run_ingest

    settings = settings_for("balanced", spec)
    start = time.perf_counter()
    report = run_ingest(spec.sources, settings=settings)
    failed = [s for s in report.sources if s.status == "failed"]
    if failed:
        raise SystemExit(f"{spec.name}: ingest failed: {failed[0].errors[:3]}")
    spec.ingest = {"seconds": time.perf_counter() - start,
                   "embeddings": report.embeddings_computed,
                   "chunks": resources.document_index(settings).count()}
    print(f"[{spec.name}] {spec.collection}: {spec.ingest['chunks']} chunks, "
          f"{spec.ingest['embeddings']} embeddings computed in {spec.ingest['seconds']:.0f} s",
          flush=True)


# ------------------------------------------------------------------------------------ legs


@dataclass
class Legs:
    """One query's candidate lists and what the re-scoring variants need."""

    dense: list[Any]
    sparse: list[Any]
    query: np.ndarray


def compute_legs(spec: Collection, depth: int) -> dict[str, Legs]:
    """Dense and BM25 candidates of every query, through ragloom's index objects."""
    from ragloom import resources

    deps = resources.rag_deps(settings_for("balanced", spec))
    bm25 = deps.bm25_index()
    texts = [text for _, text in spec.queries]
    vectors = deps.embedder.embed_queries(texts)
    legs: dict[str, Legs] = {}
    for (qid, text), vector in zip(spec.queries, vectors):
        legs[qid] = Legs(deps.index.search(vector, depth), bm25.search(text, depth), vector)
    return legs


# -------------------------------------------------------------------------------- scoring


def unit_ranking(chunks: Iterable[Any], mapper: Mapper) -> dict[str, float]:
    """Units in order of their best chunk; score = -(first position), for trec_eval."""
    ranking: dict[str, float] = {}
    for scored in chunks:
        chunk = getattr(scored, "chunk", scored)
        unit = mapper(chunk)
        if unit is not None and unit not in ranking:
            ranking[unit] = -float(len(ranking))
    return ranking


def metrics(spec: Collection, run: dict[str, dict[str, float]]) -> dict[str, float]:
    """nDCG@10, R@5, R@100 (trec_eval), both-gold@5 and the group nDCG@10s."""
    from ragloom.evaluation.metrics import ir_metrics

    names = ["ndcg@10", "recall@5", "recall@100"]
    per_query = ir_metrics(spec.qrels, run, names)
    out = {m: float(np.mean([v[m] for v in per_query.values()])) for m in names}
    both = []
    for qid, docs in spec.qrels.items():
        if len(docs) >= 2:
            top = sorted(run.get(qid, {}), key=lambda d: -run[qid][d])[:5]
            both.append(float(set(docs) <= set(top)))
    if both:
        out["both@5"] = float(np.mean(both))
    for group, qids in spec.groups.items():
        values = [per_query[q]["ndcg@10"] for q in qids if q in per_query]
        out[f"{group}:ndcg@10"] = float(np.mean(values)) if values else float("nan")
        out[f"{group}:n"] = len(values)
    return out


Variant = Callable[[Legs], list[Any]]


def run_variants(spec: Collection, legs: dict[str, Legs],
                 variants: dict[str, Variant]) -> dict[str, dict[str, float]]:
    """Every variant's metrics on one collection."""
    results = {}
    for name, variant in variants.items():
        run = {qid: unit_ranking(variant(l), spec.mapper) for qid, l in legs.items()}
        results[name] = metrics(spec, run)
    return results


def run_profile(spec: Collection, profile: str, top_n: int, warmup: int = 5) -> dict[str, Any]:
    """The whole retrieval graph of a profile: metrics and per-query latency."""
    from ragloom.runner import retrieve

    settings = settings_for(profile, spec, assemble={"token_budget": 10**7},
                            rerank={"top_n": top_n})
    for _, text in spec.queries[:warmup]:
        retrieve(text, settings=settings, top_n=top_n)
    run, latencies = {}, []
    for qid, text in spec.queries:
        start = time.perf_counter()
        answer = retrieve(text, settings=settings, top_n=top_n)
        latencies.append((time.perf_counter() - start) * 1000.0)
        run[qid] = unit_ranking(_citation_chunks(answer, spec), spec.mapper)
    out = metrics(spec, run)
    out.update(p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95))
    return out


class _CitedChunk:
    """The chunk fields a mapper reads, from a citation."""

    def __init__(self, citation: Any) -> None:
        self.id = citation.chunk_id
        self.source_id = citation.source_id
        self.doc_id = citation.chunk_id.rsplit("::", 2)[0]
        self.start = citation.start
        self.end = citation.end


def _citation_chunks(answer: Any, spec: Collection) -> list[_CitedChunk]:
    """The answer's citations as mapper inputs, best first."""
    return [_CitedChunk(c) for c in answer.citations]


def print_matrix(title: str, table: dict[str, dict[str, dict[str, float]]], metric: str,
                 extra: Sequence[tuple[str, str]] = ()) -> None:
    """Rows = variants, columns = collections (plus extra (collection, metric) columns)."""
    columns = list(table)
    rows = list(dict.fromkeys(r for c in table.values() for r in c))
    head = "".join(f"{c:>14}" for c in columns) + "".join(f"{c + ' ' + m:>18}" for c, m in extra)
    print(f"\n{title} ({metric})\n{'variant':<28}{head}")
    for row in rows:
        cells = "".join(f"{table[c].get(row, {}).get(metric, float('nan')):>14.3f}" for c in columns)
        cells += "".join(f"{table[c].get(row, {}).get(m, float('nan')):>18.3f}" for c, m in extra)
        print(f"{row:<28}{cells}")


# ------------------------------------------------------------------------------ variants


def _doc_max_fusion(legs: Legs, k: int, weight: float = 0.5) -> list[Any]:
    """Experimental: per leg, a document's score is its best chunk's (MaxP); the legs are fused
    at document level (convex of min-max scores); chunks follow their document's score."""
    from ragloom.nodes.fusion_math import _minmax

    doc_score: dict[str, float] = defaultdict(float)
    for leg, w in ((legs.dense, 1 - weight), (legs.sparse, weight)):
        norm = _minmax(leg)
        best: dict[str, float] = {}
        for s in leg:
            best[s.chunk.doc_id] = max(best.get(s.chunk.doc_id, 0.0), norm[s.chunk.id])
        for doc, value in best.items():
            doc_score[doc] += w * value
    from ragloom.nodes.fusion_math import convex

    fused = convex(legs.dense, legs.sparse, weight)
    return sorted(fused, key=lambda s: (-doc_score[s.chunk.doc_id], -s.score))[:k]


def variants(k: int) -> dict[str, Variant]:
    """The simpler variants of balanced (and experiments), each a function of one query's legs."""
    from ragloom.nodes.fusion_math import convex, rrf, sibling_evidence

    return {
        "dense": lambda legs: legs.dense[:k],
        "bm25": lambda legs: legs.sparse[:k],
        "rrf k=60": lambda legs: rrf([legs.dense, legs.sparse], 60, k),
        "convex 0.5": lambda legs: convex(legs.dense, legs.sparse, 0.5, k),
        "convex + siblings 0.75": lambda legs: sibling_evidence(
            convex(legs.dense, legs.sparse, 0.5, k), 0.75),
        "convex + local siblings": lambda legs: sibling_evidence(
            convex(legs.dense, legs.sparse, 0.5, k), 0.75, window=300),
        "rrf + siblings 0.75": lambda legs: sibling_evidence(
            rrf([legs.dense, legs.sparse], 60, k), 0.75),
        "x convex doc-max": lambda legs: _doc_max_fusion(legs, k),
    }
