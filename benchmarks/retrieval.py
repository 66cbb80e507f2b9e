"""Retrieval benchmark on BEIR SciFact: ragloom's fast/balanced/quality profiles vs the LangChain peer.

    python benchmarks/retrieval.py [--dataset scifact] [--queries N] [--scale natural|100k|both]
                                   [--profiles fast,balanced,quality] [--skip-peer]
                                   [--cprofile N] [--json out.json]
    python benchmarks/retrieval.py --matrix [--collections scifact,...] [--queries N]
                                   [--profiles balanced,quality] [--json out.json]

`--matrix` prints the ranking matrix: balanced's simpler variants (dense, BM25, RRF, convex,
with/without sibling evidence) and the shipped profiles on every dataset and chunking we build —
SciFact at natural, sentence-size and whole-document chunks, HotpotQA, a CSV-rows collection and a
mixed collection of long Markdown and one-row CSV documents (`benchmarks/retrieval_matrix.py` says
how each is built and measured).

Prints, per scale, one row per system: chunks | nDCG@10 | R@5 | R@100 | MRR@10 | p50 ms | p95 ms |
docs/q (mean distinct documents returned per query), then ragloom's mean time per graph stage.

How it is measured (read this before quoting a figure):

- Corpus: `corpus.jsonl` is ingested through ragloom's incremental pipeline (`ragloom.runner.ingest`)
  into `bench-out/data` (git-ignored) and persists: a second run finds every source unchanged and
  embeds nothing (the ingest line printed says how many embeddings were computed).
- Queries: those of `queries.jsonl` that have judgments in `qrels/<split>.tsv` (SciFact train: 809),
  in file order; `--queries N` keeps the first N (deterministic).
- ragloom: `ragloom.runner.retrieve(question, profile=p, top_n=100, settings=...)`, the public
  retrieval-only graph (guard → transform → retrieve → fuse → rerank → assemble → generate(skipped)
  → answer). With the shipped assemble budget (2000 tokens × 4 chars) only about a dozen SciFact
  passages fit, so recall@100 would be unmeasurable: the settings are
  `load_settings(p, data_dir=..., collection=..., assemble={"token_budget": 10**7},
  rerank={"top_n": 100})`. Nothing else is changed: in particular `retrieval.candidate_k` stays
  at the profile's value (fast 20, balanced 50, quality 100), so a profile returns at most
  candidate_k chunks and its "R@100" is recall at that depth (the docs/q column shows the depth
  actually reached). The script prints how many passages the shipped budget would have kept.
- Chunks → documents: a chunk id is `<doc_id>::<ordinal>::<hash>` and the JSONL loader's doc_id is
  `<source_id>#<_id>`, so the corpus id is the part after the last '#'. A document's score is the
  max over its chunks; since every system returns its chunks best first, that is the document's
  first position, which is what is handed to trec_eval (score = -(first position)), so ties keep the
  system's own order. The peer returns no scores, so the same rule is the only one that applies
  to both.
- Metrics: trec_eval via `ragloom.evaluation.metrics.ir_metrics` (pytrec_eval): ndcg@10, recall@5,
  recall@100, mrr@10 (recip_rank over the top 10).
- Latency: `time.perf_counter()` around each call, after 5 warm-up queries (also compiles the
  graph and loads the indexes); p50 and p95 over all evaluated queries. The machine is shared
  (2 cores): the load average at the start and end of the run is printed with the tables.
- Peer (what a LangChain user builds): `EnsembleRetriever([BM25Retriever (rank-bm25, default
  whitespace tokenizer, k=100), Chroma(...).as_retriever(search_kwargs={"k": 100})],
  weights=[0.5, 0.5])` (langchain_classic; weighted RRF, c=60, dedup by page content, its defaults),
  over the SAME chunks and the SAME embeddings object (`ragloom.resources.embedder`). To avoid
  re-embedding, the chunks (`document_index(settings).all_chunks()`) and their stored vectors
  (`get_embeddings`) are written straight into the peer's collection with
  `store._collection.upsert(ids, embeddings, documents, metadatas)` (langchain-chroma's `add_texts`
  always embeds). The peer collection persists under `bench-out/peer-chroma` and is rebuilt when
  the chunk ids change. The query embedding is computed by the same MiniLM object on both sides.
- Scale `100k`: the same real corpus, ingested into a second collection with the `sentence`
  chunker at size 100, overlap 0 (regex sentences packed up to 100 chars, longer sentences cut at
  words): 103,543 chunks for SciFact (size 200 gives only 57,521). Every chunk is real text of
  the document it maps back to, so the judgments hold exactly. No synthetic distractors: copies
  with shuffled words would be exact BM25 ties with their originals (BM25 is bag-of-words) and
  near-ties for MiniLM while judged non-relevant: a test rigged against both systems, not a
  realistic bigger corpus. The price: ~74-char chunks are a different (harder) regime than the
  natural ~550-char chunks, so compare systems within a scale; across scales compare latency.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import json
import os
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    ROOT,
    corpus_id,
    dataset,
    load_queries,
    peak_rss_mb,
    percentile,
)

OUT = ROOT / "bench-out"
DATA_DIR = OUT / "data"
PEER_DIR = OUT / "peer-chroma"
METRICS = ["ndcg@10", "recall@5", "recall@100", "mrr@10"]
WARMUP = 5
TOP_N = 100
SCALES: dict[str, dict[str, Any]] = {
    "natural": {"suffix": "", "chunker": None},  # the shipped default chunker (recursive 1000/150)
    "100k": {"suffix": "-100k", "chunker": {"name": "sentence", "size": 100, "overlap": 0}},
}


# ---------------------------------------------------------------------------------------- data


def doc_ranking(chunk_ids: Iterable[str]) -> dict[str, float]:
    """Documents in order of their best chunk; score = -(first position), for trec_eval."""
    ranking: dict[str, float] = {}
    for chunk_id in chunk_ids:
        doc = corpus_id(chunk_id)
        if doc not in ranking:
            ranking[doc] = -float(len(ranking))
    return ranking


def base_settings(profile: str, collection: str, **extra: Any) -> Any:
    """Settings of a profile over the benchmark collection."""
    from ragloom.settings import load_settings

    return load_settings(profile, data_dir=DATA_DIR, collection=collection, **extra)


def ingest_scale(corpus: Path, collection: str, chunker: dict | None) -> dict[str, Any]:
    """Ingest the corpus incrementally into the benchmark data dir; return timing and counts."""
    from ragloom import resources
    from ragloom.runner import ingest

    extra = {"chunker": chunker} if chunker else {}
    settings = base_settings("balanced", collection, **extra)
    resources.embedder(settings)  # load the model outside the timing
    start = time.perf_counter()
    report = ingest([str(corpus)], collection=collection, data_dir=DATA_DIR, settings=settings)
    seconds = time.perf_counter() - start
    failed = [s for s in report.sources if s.status == "failed"]
    if failed:
        raise SystemExit(f"ingest failed: {failed[0].errors[:3]}")
    chunks = resources.document_index(settings).count()
    return {"seconds": seconds, "embeddings": report.embeddings_computed, "chunks": chunks,
            "statuses": {s.source_id: s.status for s in report.sources}}


# ---------------------------------------------------------------------------------- systems


def timed_runs(queries: list[tuple[str, str]], call: Callable[[str], list[str]],
               after_warmup: Callable[[], None] | None = None) -> tuple[dict, list[float]]:
    """Warm up, then time `call(question) -> chunk ids` per query; return (run, latencies ms)."""
    for _, text in queries[:WARMUP]:
        call(text)
    if after_warmup is not None:
        after_warmup()
    run: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    for qid, text in queries:
        start = time.perf_counter()
        chunk_ids = call(text)
        latencies.append((time.perf_counter() - start) * 1000.0)
        run[qid] = doc_ranking(chunk_ids)
    return run, latencies


def ragloom_caller(profile: str, collection: str) -> tuple[Callable[[str], list[str]], dict]:
    """A question → chunk ids function over ragloom's retrieval-only graph, plus stage stats."""
    from ragloom.runner import retrieve

    settings = base_settings(profile, collection, assemble={"token_budget": 10**7},
                             rerank={"top_n": TOP_N})
    stats: dict[str, Any] = {"stage_ms": defaultdict(float), "detail_ms": defaultdict(float),
                             "calls": 0, "passages": 0}

    def call(question: str) -> list[str]:
        answer = retrieve(question, profile=profile, top_n=TOP_N, settings=settings)
        stats["calls"] += 1
        stats["passages"] += len(answer.citations)
        for step in answer.trace:
            stats["stage_ms"][step.stage] += step.duration_ms
            for key in ("embed_ms", "vector_ms", "bm25_ms"):
                if key in step.detail:
                    stats["detail_ms"][key] += float(step.detail[key])
        return [c.chunk_id for c in answer.citations]

    return call, stats


def shipped_budget_passages(question: str, profile: str, collection: str) -> int:
    """How many passages the shipped assemble budget keeps for one question at top_n 100."""
    from ragloom.runner import retrieve

    settings = base_settings(profile, collection, rerank={"top_n": TOP_N})
    return len(retrieve(question, profile=profile, top_n=TOP_N, settings=settings).citations)


def build_peer(collection: str) -> tuple[Any, dict[str, Any]]:
    """EnsembleRetriever(BM25Retriever, Chroma retriever) over ragloom's stored chunks + vectors."""
    import warnings

    from langchain_chroma import Chroma
    from langchain_classic.retrievers import EnsembleRetriever

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.retrievers import BM25Retriever

    from ragloom import resources
    from ragloom.stores.bm25 import ids_revision

    settings = base_settings("balanced", collection)
    embedder = resources.embedder(settings)
    index = resources.document_index(settings)
    start = time.perf_counter()
    chunks = sorted(index.all_chunks(), key=lambda c: c.id)
    ids = [c.id for c in chunks]
    texts = [c.text for c in chunks]
    metadatas = [{"doc_id": corpus_id(c.id), "chunk_id": c.id} for c in chunks]
    read_s = time.perf_counter() - start

    start = time.perf_counter()
    bm25 = BM25Retriever.from_texts(texts, metadatas=metadatas, k=TOP_N)
    bm25_s = time.perf_counter() - start

    start = time.perf_counter()
    name = f"peer-{collection}"
    revision = ids_revision(ids)
    stamp = PEER_DIR / f"{name}.revision"
    store = Chroma(collection_name=name, embedding_function=embedder,
                   persist_directory=str(PEER_DIR))
    reused = stamp.exists() and stamp.read_text() == revision and store._collection.count() == len(ids)
    if not reused:
        store.delete_collection()
        store = Chroma(collection_name=name, embedding_function=embedder,
                       persist_directory=str(PEER_DIR))
        batch = store._client.get_max_batch_size()
        for lo in range(0, len(ids), batch):
            part = ids[lo:lo + batch]
            vectors = index.get_embeddings(part)
            store._collection.upsert(ids=part, embeddings=[vectors[i] for i in part],
                                     documents=texts[lo:lo + batch],
                                     metadatas=metadatas[lo:lo + batch])
        stamp.write_text(revision)
    chroma_s = time.perf_counter() - start

    ensemble = EnsembleRetriever(
        retrievers=[bm25, store.as_retriever(search_kwargs={"k": TOP_N})], weights=[0.5, 0.5]
    )
    info = {"chunks": len(ids), "read_s": read_s, "bm25_build_s": bm25_s,
            "chroma_s": chroma_s, "chroma_reused": reused}
    return ensemble, info


def peer_caller(ensemble: Any) -> Callable[[str], list[str]]:
    """A question → chunk ids function over the peer."""
    def call(question: str) -> list[str]:
        return [d.metadata["chunk_id"] for d in ensemble.invoke(question)]
    return call


# -------------------------------------------------------------------------------- reporting


def score(qrels: dict, run: dict) -> dict[str, float]:
    """Mean trec_eval metrics of a run (queries with no result count as zeros)."""
    from ragloom.evaluation.metrics import ir_metrics

    per_query = ir_metrics(qrels, run, METRICS)
    return {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in METRICS}


def summarize(name: str, chunks: int, qrels: dict, run: dict, latencies: list[float],
              wall_s: float) -> dict[str, Any]:
    """One table row."""
    docs = sum(len(r) for r in run.values()) / max(len(run), 1)
    return {"system": name, "chunks": chunks, **score(qrels, run),
            "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95),
            "mean_ms": sum(latencies) / len(latencies), "docs_per_query": docs,
            "wall_s": wall_s, "queries": len(latencies)}


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    """The per-scale table."""
    print(f"\n{title}")
    print(f"{'system':<34}{'chunks':>8}{'nDCG@10':>9}{'R@5':>7}{'R@100':>7}{'MRR@10':>8}"
          f"{'p50 ms':>9}{'p95 ms':>9}{'docs/q':>8}")
    for r in rows:
        print(f"{r['system']:<34}{r['chunks']:>8}{r['ndcg@10']:>9.3f}{r['recall@5']:>7.3f}"
              f"{r['recall@100']:>7.3f}{r['mrr@10']:>8.3f}{r['p50_ms']:>9.1f}{r['p95_ms']:>9.1f}"
              f"{r['docs_per_query']:>8.1f}")


def print_stages(profile: str, stats: dict, latencies_mean: float) -> dict[str, float]:
    """Mean ms per graph stage of a ragloom profile, and what the stages do not account for."""
    calls = max(stats["calls"], 1)
    stages = {k: v / calls for k, v in stats["stage_ms"].items()}
    details = {k: v / calls for k, v in stats["detail_ms"].items()}
    accounted = sum(stages.values())
    stages_txt = " ".join(f"{k} {v:.2f}" for k, v in stages.items())
    details_txt = " ".join(f"{k} {v:.2f}" for k, v in details.items())
    print(f"  {profile:<9} mean {latencies_mean:.2f} ms = stages {accounted:.2f} "
          f"[{stages_txt}] ({details_txt}) + outside stages {latencies_mean - accounted:.2f}")
    return {**stages, **details, "outside_stages": latencies_mean - accounted}


def profile_calls(name: str, call: Callable[[str], list[str]], queries: list[tuple[str, str]],
                  top: int = 25) -> None:
    """cProfile `call` over the queries; print the hottest functions (tottime and cumulative)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _, text in queries:
        call(text)
    profiler.disable()
    for key in ("tottime", "cumulative"):
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats(key).print_stats(top)
        body = buffer.getvalue()
        start = body.find("   ncalls")
        print(f"\n--- cProfile {name}, {len(queries)} queries, by {key} ---")
        print(body[start:].rstrip() if start >= 0 else body.rstrip())


# ------------------------------------------------------------------------------------- main


def bench_scale(scale: str, args: argparse.Namespace, root: Path,
                queries: list[tuple[str, str]], qrels: dict) -> dict[str, Any]:
    """Ingest (incrementally), then evaluate every profile and the peer at one scale."""
    spec = SCALES[scale]
    collection = f"{args.dataset}{spec['suffix']}"
    ingest_info = ingest_scale(root / "corpus.jsonl", collection, spec["chunker"])
    print(f"\n[{scale}] ingest of {collection!r}: {ingest_info['seconds']:.1f} s, "
          f"{ingest_info['embeddings']} embeddings computed, {ingest_info['chunks']} chunks, "
          f"sources {sorted(set(ingest_info['statuses'].values()))}", flush=True)
    chunks = ingest_info["chunks"]
    if scale == "100k" and chunks < 100_000:
        print(f"[{scale}] warning: only {chunks} chunks (< 100k) for this dataset")
    rows, stages = [], {}
    for profile in args.profiles:
        kept = shipped_budget_passages(queries[0][1], profile, collection)
        call, stats = ragloom_caller(profile, collection)

        def reset(stats: dict = stats) -> None:  # the stage means leave the warm-up out
            stats["stage_ms"].clear()
            stats["detail_ms"].clear()
            stats["calls"] = stats["passages"] = 0

        start = time.perf_counter()
        run, latencies = timed_runs(queries, call, after_warmup=reset)
        wall = time.perf_counter() - start
        row = summarize(f"ragloom {profile}", chunks, qrels, run, latencies, wall)
        row["shipped_budget_passages"] = kept
        rows.append(row)
        print(f"[{scale}] ragloom {profile}: nDCG@10 {row['ndcg@10']:.3f}, p50 "
              f"{row['p50_ms']:.1f} ms, {wall:.1f} s wall; the shipped assemble budget would "
              f"keep {kept} of the passages for query 1", flush=True)
        stages[profile] = (copy.deepcopy(stats), row["mean_ms"])
        if args.cprofile:
            profile_calls(f"ragloom {profile} [{scale}]", call, queries[: args.cprofile])
    peer_info = None
    if not args.skip_peer:
        ensemble, peer_info = build_peer(collection)
        print(f"[{scale}] peer built: read {peer_info['read_s']:.1f} s, rank-bm25 "
              f"{peer_info['bm25_build_s']:.1f} s, chroma {peer_info['chroma_s']:.1f} s "
              f"({'reused' if peer_info['chroma_reused'] else 'written, no re-embedding'})",
              flush=True)
        call = peer_caller(ensemble)
        start = time.perf_counter()
        run, latencies = timed_runs(queries, call)
        wall = time.perf_counter() - start
        rows.append(summarize("LangChain Ensemble(BM25+Chroma)", peer_info["chunks"], qrels, run,
                              latencies, wall))
        print(f"[{scale}] peer: nDCG@10 {rows[-1]['ndcg@10']:.3f}, p50 "
              f"{rows[-1]['p50_ms']:.1f} ms, {wall:.1f} s wall", flush=True)
        if args.cprofile:
            profile_calls(f"peer [{scale}]", call, queries[: args.cprofile])
    return {"collection": collection, "ingest": ingest_info, "peer_build": peer_info,
            "rows": rows, "stages": stages}


def check_targets(results: dict[str, dict[str, Any]]) -> list[str]:
    """The project's targets, each with PASS/MISS."""
    lines = []

    def row(scale: str, system: str) -> dict[str, Any] | None:
        return next((r for r in results.get(scale, {}).get("rows", []) if r["system"] == system),
                    None)

    peer_name = "LangChain Ensemble(BM25+Chroma)"
    for scale in results:
        bal, peer, fast = row(scale, "ragloom balanced"), row(scale, peer_name), row(scale,
                                                                                  "ragloom fast")
        if bal and peer:
            ok = bal["ndcg@10"] > peer["ndcg@10"]
            lines.append(f"[{'PASS' if ok else 'MISS'}] {scale}: balanced nDCG@10 "
                         f"{bal['ndcg@10']:.3f} > peer {peer['ndcg@10']:.3f}")
            ratio = peer["p50_ms"] / bal["p50_ms"]
            need = 5.0 if scale == "100k" else 1.0
            lines.append(f"[{'PASS' if ratio > need else 'MISS'}] {scale}: balanced p50 "
                         f"{bal['p50_ms']:.1f} ms vs peer {peer['p50_ms']:.1f} ms = {ratio:.1f}x "
                         f"faster (need > {need:g}x)")
        if bal and fast:
            ok = bal["ndcg@10"] >= fast["ndcg@10"] + 0.05
            lines.append(f"[{'PASS' if ok else 'MISS'}] {scale}: balanced nDCG@10 "
                         f"{bal['ndcg@10']:.3f} >= fast {fast['ndcg@10']:.3f} + 0.05")
        if scale == "natural":
            for r, limit in ((fast, 15.0), (bal, 30.0)):
                if r:
                    ok = r["p50_ms"] < limit
                    lines.append(f"[{'PASS' if ok else 'MISS'}] natural: {r['system']} p50 "
                                 f"{r['p50_ms']:.1f} ms < {limit:g} ms")
    for profile in ("fast", "balanced", "quality"):
        a, b = row("natural", f"ragloom {profile}"), row("100k", f"ragloom {profile}")
        if a and b:
            lines.append(f"[info] {profile} p50 grows {a['p50_ms']:.1f} → {b['p50_ms']:.1f} ms "
                         f"({b['p50_ms'] / a['p50_ms']:.2f}x) from natural to 100k")
    a, b = row("natural", peer_name), row("100k", peer_name)
    if a and b:
        lines.append(f"[info] peer p50 grows {a['p50_ms']:.1f} → {b['p50_ms']:.1f} ms "
                     f"({b['p50_ms'] / a['p50_ms']:.2f}x) from natural to 100k")
    return lines


MATRIX_COLLECTIONS = "scifact,scifact-sent,scifact-doc,hotpotqa,csv-rows,mixed"


def run_matrix(args: argparse.Namespace) -> None:
    """The ranking matrix: every variant and profile on every collection."""
    import retrieval_matrix as matrix

    names = [n.strip() for n in (args.collections or MATRIX_COLLECTIONS).split(",") if n.strip()]
    load_start = os.getloadavg()
    started = time.perf_counter()
    table: dict[str, dict[str, dict[str, float]]] = {}
    ingests: dict[str, Any] = {}
    for spec in matrix.collections(names, args.queries):
        matrix.ingest(spec)
        ingests[spec.name] = spec.ingest
        legs = matrix.compute_legs(spec, matrix.DEPTH)
        table[spec.name] = matrix.run_variants(spec, legs, matrix.variants(matrix.DEPTH))
        for profile in args.profiles:
            row = matrix.run_profile(spec, profile, TOP_N)
            table[spec.name][f"ragloom {profile} (graph)"] = row
            print(f"[{spec.name}] {profile}: nDCG@10 {row['ndcg@10']:.3f}, p50 {row['p50_ms']:.1f} ms",
                  flush=True)
    load_end = os.getloadavg()
    print(f"\nranking matrix, {time.perf_counter() - started:.0f} s; load average "
          f"{load_start[0]:.2f} at start, {load_end[0]:.2f} at end; chunks: "
          + ", ".join(f"{n} {i['chunks']}" for n, i in ingests.items()))
    matrix.print_matrix("documents by best chunk", table, "ndcg@10",
                        extra=[(c, m) for c, m in (("hotpotqa", "both@5"), ("mixed", "csv:ndcg@10"))
                               if c in table])
    matrix.print_matrix("documents by best chunk", table, "recall@5")
    profiles = {c: {r: v for r, v in rows.items() if "p50_ms" in v} for c, rows in table.items()}
    matrix.print_matrix("graph latency", profiles, "p50_ms")
    if args.json:
        args.json.write_text(json.dumps({"table": table, "ingest": ingests,
                                         "load": [load_start, load_end]}, indent=2, default=str))


def main() -> None:
    """Parse arguments, run the scales, print the tables and the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", action="store_true", help="the ranking matrix (see above)")
    parser.add_argument("--collections", default=None,
                        help=f"matrix collections (default {MATRIX_COLLECTIONS})")
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--split", default="train", help="qrels/<split>.tsv")
    parser.add_argument("--queries", type=int, default=None, help="first N judged queries only")
    parser.add_argument("--scale", choices=["natural", "100k", "both"], default="natural")
    parser.add_argument("--profiles", default="fast,balanced,quality")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="also cProfile N queries per system and print the hot spots")
    parser.add_argument("--json", type=Path, default=None, help="also write figures as JSON")
    args = parser.parse_args()
    args.profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    if args.matrix:
        run_matrix(args)
        return
    root = dataset(args.dataset)
    queries, qrels = load_queries(root, args.split, args.queries)
    scales = ["natural", "100k"] if args.scale == "both" else [args.scale]
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    PEER_DIR.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    started = time.perf_counter()
    results = {scale: bench_scale(scale, args, root, queries, qrels) for scale in scales}
    total_s = time.perf_counter() - started
    load_end = os.getloadavg()

    print(f"\n{args.dataset} {args.split}: {len(queries)} queries, top_n {TOP_N}, 2-core CPU, "
          f"all-MiniLM-L6-v2; load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end")
    for scale, result in results.items():
        print_table(f"[{scale}] collection {result['collection']!r}", result["rows"])
    for scale, result in results.items():
        print(f"\n[{scale}] ragloom mean ms per stage (timed queries):")
        result["stage_means"] = {p: print_stages(p, s, m) for p, (s, m) in result["stages"].items()}
        del result["stages"]
    print("\nTargets:")
    for line in check_targets(results):
        print(f"  {line}")
    print(f"\ntotal {total_s:.0f} s, peak RSS {peak_rss_mb():.0f} MiB")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: (str(v) if isinstance(v, Path) else v)
                                                  for k, v in vars(args).items()},
                                         "queries": len(queries), "total_s": total_s,
                                         "load": [load_start, load_end], "results": results},
                                        indent=2, default=str))


if __name__ == "__main__":
    main()
