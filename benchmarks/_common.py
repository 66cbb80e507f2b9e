"""Shared helpers of the benchmark scripts: dataset paths, BEIR reading, timing, memory."""

from __future__ import annotations

import json
import os
import resource
import statistics
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("RAGLOOM_SHARED_DATA", ROOT.parent / "shared" / "data"))


def dataset(name: str) -> Path:
    """Directory of a BEIR dataset under ../shared/data (or $RAGLOOM_SHARED_DATA)."""
    path = SHARED_DATA / name
    if not (path / "corpus.jsonl").exists():
        raise SystemExit(f"dataset not found: {path} (set RAGLOOM_SHARED_DATA)")
    return path


def read_jsonl(path: Path) -> list[dict]:
    """All records of a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of values."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def load_queries(root: Path, split: str, limit: int | None) -> tuple[list[tuple[str, str]], dict]:
    """Judged queries in file order (first `limit`) and their qrels as {qid: {doc: grade}}."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            if line.strip():
                qid, doc, score = line.rstrip("\n").split("\t")
                if int(score) > 0:
                    qrels[qid][doc] = int(score)
    queries = [(str(q["_id"]), q["text"]) for q in read_jsonl(root / "queries.jsonl")
               if str(q["_id"]) in qrels]
    if limit:
        queries = queries[:limit]
    return queries, {qid: dict(qrels[qid]) for qid, _ in queries}


def corpus_id(chunk_id: str) -> str:
    """BEIR `_id` of a chunk: `<source_id>#<_id>::<ordinal>::<hash>` → `_id`."""
    return chunk_id.rsplit("::", 2)[0].rsplit("#", 1)[1]
