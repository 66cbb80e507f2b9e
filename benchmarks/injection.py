"""Injection screening on the labelled set in benchmarks/data/injection: detection and false positives.

    python benchmarks/injection.py [--split dev|holdout|fresh|probe…|fresh4|all] [--semantic]
                                   [--list [--evidence]] [--json OUT]
    python benchmarks/injection.py --leave-split-out [SPLIT ...] [--threshold T] [--c C]
                                   # the full screen on each split, its layer fitted without it
    python benchmarks/injection.py --leave-author-out [--threshold T] [--c C]
                                   # the layer on each exemplar author's lines, fitted without them
    python benchmarks/injection.py --held-out-author EXEMPLARS_JSONL [--threshold T]
                                   # the packaged layer on an author outside the fit
    python benchmarks/injection.py --refit [SPLIT ...] # fit the layer (exemplars + splits), write it
    python benchmarks/injection.py --benign-corpus /work/shared/data/scifact/corpus.jsonl \
                                   [--limit N] [--offset K]   # false flags in benign text

Every file goes through the real loaders (`read_source`, `parse_source`) and `scan_injection`, as
in the ingest graph's validate node. A source is *quarantined* when any of its documents is
rejected (or its bytes are), *flagged* when any is suspicious, else clean. Prints, per split, the
detection rate (quarantined or flagged) of the injected documents and the quarantined and flagged
rates of the benign ones, overall and per class. `--list` prints every file's verdict, score and
signals (`--evidence`: and the evidence). `--semantic` adds the semantic layer
(`ragloom.ingestion.injection.semantic`, its packaged fit) on the documents the rules found clean.
`--leave-split-out` fits the layer without one split (exemplars + the other splits) and scores the
full screen (the shipped rules, then that fit) on the split left out, for each split; then the
mean and worst split over a sweep of thresholds. `--leave-author-out` fits the layer without one
exemplar author's lines (the `source` key; with every fit split) and scores those lines, the layer
alone, sentence by sentence: ROC AUC, recall at the threshold and at 5% benign false positives,
benign false positives at the threshold; then mean and worst over the authors
(`--held-out-author`: the same figures for a file of sentences by an author no fit has seen, scored
by the packaged layer). The rules were developed on every split, so only the layer's part is out
of sample. `--benign-corpus` counts what rules and layer flag in
benign text (SciFact abstracts): the false-flag check outside the labelled set.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

SET = Path(__file__).resolve().parent / "data" / "injection"
FIT_SPLITS = ("dev", "holdout", "fresh", "probe", "probe2", "probe3", "probe4", "fresh2", "fresh3",
              "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11",
              "fresh12", "fresh13", "fresh14", "fresh15", "fresh16")
"""The splits the packaged fit of the semantic layer is made from (the held-out `fresh2` to
`fresh16` are spent) and that `--leave-split-out` scores."""
SPLITS = (*FIT_SPLITS, "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23",
          "fresh24", "fresh25", "fresh26", "fresh27", "fresh28", "fresh29", "fresh30")
"""In the order written. `fresh17` to `fresh28` (written blind during sessions 9 and 10) are outside the
fit (a refit with fresh17 and fresh18 lost on fresh19: docs/benchmarks.md, "Round 9"); a new
held-out set joins here, outside the fit, until it is scored once."""


def _documents(path: Path) -> list:  # type: ignore[type-arg]
    from ragloom.ingestion.loaders import SourceRef, parse_source, read_source
    from ragloom.settings import IngestSettings

    settings = IngestSettings()
    ref = SourceRef(source_id=path.as_posix(), origin=path.as_posix(), kind="file")
    return parse_source(read_source(ref, settings), settings)


@functools.lru_cache(maxsize=1)
def _embedder():  # type: ignore[no-untyped-def]
    from ragloom.providers.embeddings import get_embedder
    from ragloom.settings import load_settings

    return get_embedder(load_settings().embedding)


@functools.lru_cache(maxsize=None)
def _rules(file: str) -> tuple:  # type: ignore[type-arg]
    """(status, score, signals, evidence, per document (rules verdict, windows)) of one source."""
    from ragloom.errors import LoadError, RejectedSourceError
    from ragloom.ingestion.injection.semantic import document_windows
    from ragloom.ingestion.injection.screen import scan_injection

    try:
        documents = _documents(SET / file)
    except RejectedSourceError as err:
        return "quarantined", 0.0, tuple(err.signals), (str(err),), ()
    except LoadError as err:
        return "failed", 0.0, (), (str(err),), ()
    verdicts = [scan_injection(doc) for doc in documents]
    worst = max(verdicts, key=lambda v: (["clean", "suspicious", "rejected"].index(v.status), v.score))
    status = {"rejected": "quarantined", "suspicious": "flagged", "clean": "clean"}[worst.status]
    docs = tuple((v, tuple(document_windows(d))) for v, d in zip(verdicts, documents, strict=True))
    return status, worst.score, tuple(worst.signals), tuple(worst.evidence), docs


@functools.lru_cache(maxsize=None)
def _rows(file: str) -> np.ndarray:
    """The layer's input rows for every window of one source (its documents in order)."""
    from ragloom.ingestion.injection.semantic import matrix

    windows = [w for _, ws in _rules(file)[4] for w in ws]
    return matrix(windows, _embedder().embed_array) if windows else np.zeros((0, 0), np.float32)


def screen(file: str, detector=None) -> tuple[str, float, list[str], list[str]]:  # type: ignore[no-untyped-def]
    """(status, score, signals, evidence) of one source, as the ingest graph would decide; with a
    detector, the semantic layer runs on the documents the rules found clean."""
    status, score, signals, evidence, docs = _rules(file)
    if detector is None or status != "clean":
        return status, score, list(signals), list(evidence)
    rows, offset = _rows(file), 0
    for verdict, windows in docs:
        part = rows[offset:offset + len(windows)]
        offset += len(windows)
        flagged = detector.verdict(verdict, list(windows), detector.probabilities(part))
        if flagged.status == "suspicious":
            return "flagged", flagged.score, flagged.signals, flagged.evidence
    return status, score, list(signals), list(evidence)


def rates(rows: list[dict[str, str]]) -> dict[str, float | int]:
    """Counts and shares of quarantined, flagged and detected sources."""
    n = len(rows)
    quarantined = sum(r["status"] == "quarantined" for r in rows)
    flagged = sum(r["status"] == "flagged" for r in rows)
    return {
        "n": n,
        "quarantined": round(quarantined / n, 3) if n else 0.0,
        "flagged": round(flagged / n, 3) if n else 0.0,
        "detected": round((quarantined + flagged) / n, 3) if n else 0.0,
    }


def report(rows: list[dict[str, str]], split: str) -> dict[str, object]:
    """Overall and per-class figures of one split."""
    injected = [r for r in rows if r["label"] == "injected"]
    benign = [r for r in rows if r["label"] == "benign"]
    classes: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        classes[(row["label"], row["class"])].append(row)
    out = {
        "split": split,
        "injected": rates(injected),
        "benign": rates(benign),
        "per_class": {f"{label}/{cls}": rates(group) for (label, cls), group in sorted(classes.items())},
    }
    inj, ben = out["injected"], out["benign"]
    print(f"\n== {split}: {inj['n']} injected, {ben['n']} benign")
    print(f"injected: detected {inj['detected']:.3f} (quarantined {inj['quarantined']:.3f}, "
          f"flagged {inj['flagged']:.3f})")
    print(f"benign:   quarantined {ben['quarantined']:.3f}, flagged {ben['flagged']:.3f}")
    print(f"{'class':40s} {'n':>3s} {'quar':>6s} {'flag':>6s} {'det':>6s}")
    for name, figures in out["per_class"].items():  # type: ignore[union-attr]
        print(f"{name:40s} {figures['n']:3d} {figures['quarantined']:6.2f} {figures['flagged']:6.2f} "
              f"{figures['detected']:6.2f}")
    return out




@functools.lru_cache(maxsize=2)
def _exemplar_rows(path: Path | None = None) -> tuple[np.ndarray, tuple[str, ...]]:
    """The layer's input rows and labels of an exemplar file (default: the packaged exemplars)."""
    from ragloom.ingestion.injection import semantic as sem

    exemplars = sem.load_exemplars(path or sem.EXEMPLARS)
    return sem.matrix(sem.exemplar_windows(exemplars), _embedder().embed_array), exemplars.labels


def fit_layer(labels: list[dict[str, str]], c: float,  # type: ignore[no-untyped-def]
              keep: np.ndarray | None = None):
    """Fit the layer's head on the exemplars (those `keep` marks, default all) and the windows
    of these labelled sources.

    Every window of a benign source is benign. An injected source holds benign sentences too
    (multiple instance): only its window a first fit (a logistic regression on the exemplars'
    embeddings and hand features, not their n-grams) scores highest is `injected`; its other
    windows are left out.
    """
    from ragloom.ingestion.injection.semantic import InjectionDetector, fit_rows, without_ngrams
    from ragloom.providers.exemplar_model import fit_matrix

    matrix, names = _exemplar_rows()
    if keep is not None:
        matrix, names = matrix[keep], tuple(np.array(names)[keep])
    first = InjectionDetector(fit_matrix(without_ngrams(matrix), names, c))
    parts, part_labels = [matrix], list(names)
    for row in labels:
        rows = _rows(row["file"])
        if not len(rows):
            continue
        if row["label"] == "benign":
            parts.append(rows)
            part_labels += ["benign"] * len(rows)
        else:
            parts.append(rows[[int(first.probabilities(without_ngrams(rows)).argmax())]])
            part_labels.append("injected")
    return fit_rows(np.concatenate(parts), part_labels)


THRESHOLDS = (0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99)


def _peaks(detector, file: str) -> tuple[float, ...]:  # type: ignore[no-untyped-def]
    """The layer's highest window probability of each document of one source."""
    rows, offset, peaks = _rows(file), 0, []
    probabilities = detector.probabilities(rows) if len(rows) else np.zeros(0)
    for _, windows in _rules(file)[4]:
        part = probabilities[offset:offset + len(windows)]
        offset += len(windows)
        peaks.append(float(part.max(initial=0.0)))
    return tuple(peaks)


def _status(file: str, peaks: tuple[float, ...], threshold: float) -> str:
    """The full screen's verdict on one source: the rules', or flagged when they found it clean
    and a document's best window reaches the threshold."""
    status = _rules(file)[0]
    if status == "clean" and any(p >= threshold for p in peaks):
        return "flagged"
    return status


def leave_split_out(labels: list[dict[str, str]], tests: list[str], c: float,
                    threshold: float) -> int:
    """Fit the layer on the exemplars and every fit split but one; score the full screen (the
    shipped rules + that fit) on the split left out; repeat for each; sweep the threshold."""
    peaks: dict[str, tuple[float, ...]] = {}
    for test in tests:
        from ragloom.ingestion.injection.semantic import InjectionDetector

        train = [r for r in labels if r["split"] in FIT_SPLITS and r["split"] != test]
        detector = InjectionDetector(fit_layer(train, c), threshold)
        peaks.update({r["file"]: _peaks(detector, r["file"]) for r in labels if r["split"] == test})
    print(f"\nleave-split-out: the full screen (shipped rules + the layer fitted on the exemplars "
          f"and every fit split but the one scored), C {c:g}, threshold {threshold:.2f}")
    for test in tests:
        rows = [{**r, "status": _status(r["file"], peaks[r["file"]], threshold)}
                for r in labels if r["split"] == test]
        report(rows, f"{test}, layer fitted without it")
    print(f"\n{'threshold':>9s} {'det mean':>9s} {'det worst':>9s} {'ben f mean':>10s} "
          f"{'ben f worst':>11s} {'ben q worst':>11s}   (over {', '.join(tests)})")
    for t in sorted({*THRESHOLDS, threshold}):
        per_split = []
        for test in tests:
            rows = [{**r, "status": _status(r["file"], peaks[r["file"]], t)}
                    for r in labels if r["split"] == test]
            per_split.append((rates([r for r in rows if r["label"] == "injected"]),
                              rates([r for r in rows if r["label"] == "benign"])))
        detected = [inj["detected"] for inj, _ in per_split]
        flagged = [ben["flagged"] for _, ben in per_split]
        print(f"{t:9.2f} {np.mean(detected):9.3f} {min(detected):9.3f} {np.mean(flagged):10.3f} "
              f"{max(flagged):11.3f} {max(ben['quarantined'] for _, ben in per_split):11.3f}")
    return 0


FIXED_FP = 0.05
"""The benign false-positive rate `--leave-author-out` reads recall at."""
AUTHOR_HEADER = (f"{'author':8s} {'inj':>4s} {'ben':>4s} {'auc':>6s} {'recall':>7s} "
                 f"{f'r@fp{FIXED_FP:.0%}':>8s} {'ben fp':>7s}")


def _author_row(author: str, probability: np.ndarray, injected: np.ndarray,
                threshold: float) -> tuple[float, float, float, float]:
    """Print and return one author's figures: ROC AUC, recall at the threshold and at `FIXED_FP`
    benign false positives, and the benign false-positive rate at the threshold."""
    from sklearn.metrics import roc_auc_score  # type: ignore[import-untyped]

    positive, benign = probability[injected], np.sort(probability[~injected])
    at_fp = benign[int(np.ceil((1 - FIXED_FP) * len(benign))) - 1]
    row = (float(roc_auc_score(injected, probability)), float(np.mean(positive >= threshold)),
           float(np.mean(positive > at_fp)), float(np.mean(benign >= threshold)))
    print(f"{author:8s} {len(positive):4d} {len(benign):4d} {row[0]:6.3f} {row[1]:7.3f} "
          f"{row[2]:8.3f} {row[3]:7.3f}")
    return row


def held_out_author(path: Path, threshold: float) -> int:
    """Score the sentences of a JSONL file of exemplars by an author outside the fit (the format of
    `injection/data/addressing.jsonl`) with the packaged layer alone, as `--leave-author-out` scores a
    left-out author."""
    from ragloom.ingestion.injection import semantic as sem

    rows, labels = _exemplar_rows(path)
    probability = sem.injection_detector(_embedder()).probabilities(rows)
    print(f"\nheld-out author: {path.name}, the packaged layer alone, threshold {threshold:.2f}")
    print(AUTHOR_HEADER)
    author = "+".join(sorted(set(sem.exemplar_sources(path))))
    _author_row(author, probability, np.array(labels) == sem.INJECTED, threshold)
    return 0


def leave_author_out(labels: list[dict[str, str]], c: float, threshold: float) -> int:
    """Fit the layer without one exemplar author's lines (with every fit split) and score that
    author's sentences, for each author: ROC AUC, recall at the threshold and at `FIXED_FP`
    benign false positives, and the benign false-positive rate at the threshold."""
    from ragloom.ingestion.injection.semantic import INJECTED, InjectionDetector, exemplar_sources

    matrix, names = _exemplar_rows()
    sources, injected = np.array(exemplar_sources()), np.array(names) == INJECTED
    train = [r for r in labels if r["split"] in FIT_SPLITS]
    print(f"\nleave-author-out: the layer alone on each author's sentences, fitted on the other "
          f"authors and every fit split; C {c:g}, threshold {threshold:.2f}")
    print(AUTHOR_HEADER)
    figures = []
    for author in dict.fromkeys(sources):
        held = sources == author
        probability = InjectionDetector(fit_layer(train, c, ~held)).probabilities(matrix[held])
        figures.append(_author_row(author, probability, injected[held], threshold))
    table = np.array(figures)
    for name, row in (("mean", table.mean(0)), ("worst", (*table[:, :3].min(0), table[:, 3].max()))):
        print(f"{name:8s} {'':9s} {row[0]:6.3f} {row[1]:7.3f} {row[2]:8.3f} {row[3]:7.3f}")
    return 0


def refit(labels: list[dict[str, str]], splits: list[str]) -> int:
    """Fit the layer on the exemplars and these splits; write the packaged fit."""
    from ragloom.ingestion.injection import semantic as sem
    from ragloom.providers.exemplar_model import fit_key, write_fit

    embedder = _embedder()
    if sem.unsuited(embedder):
        print(f"refit needs the {sem.TUNED_MODEL} embedder", file=sys.stderr)
        return 1
    train = [r for r in labels if r["split"] in splits]
    key = fit_key(embedder, sem.load_exemplars(), sem.C, sem.HEAD)
    assert key is not None
    write_fit(sem.PACKAGED_FIT, key, fit_layer(train, sem.C))
    print(f"wrote {sem.PACKAGED_FIT} ({key}; exemplars + {'+'.join(splits)})")
    return 0


def benign_corpus(path: Path, limit: int, offset: int) -> int:
    """Screen `limit` records (after the first `offset`) of a BEIR corpus (benign text: title and
    abstract as one document each) with the rules and the packaged layer; print what is flagged,
    by threshold."""
    from ragloom.ingestion.injection import semantic as sem
    from ragloom.ingestion.injection.screen import scan_injection
    from ragloom.state import SourceDocument

    with path.open(encoding="utf-8") as handle:
        records = [json.loads(line) for n, line in zip(range(offset + limit), handle, strict=False)
                   if n >= offset]
    detector = sem.injection_detector(_embedder())
    peaks, ruled, windows = [], 0, 0
    start = time.perf_counter()
    for record in records:
        doc = SourceDocument(doc_id=record["_id"], source_id=record["_id"],
                             text=f"{record.get('title', '')}\n\n{record['text']}")
        if scan_injection(doc).status != "clean":
            ruled += 1
            continue
        ws = sem.document_windows(doc)
        windows += len(ws)
        p = detector.probabilities(sem.matrix(ws, _embedder().embed_array)) if ws else np.zeros(1)
        best = int(np.argmax(p))
        peaks.append((float(p[best]), ws[best].text if ws else ""))
    elapsed = time.perf_counter() - start
    print(f"{len(records)} documents of {path} (from record {offset}): rules flag or quarantine "
          f"{ruled}; the layer scores {windows} sentences ({elapsed:.1f} s)")
    for t in sorted({*THRESHOLDS, sem.MIN_PROBABILITY}):
        n = sum(p >= t for p, _ in peaks)
        print(f"  layer at {t:.2f}: {n} flagged ({n / len(records):.1%})")
    for p, text in sorted(peaks, reverse=True)[:10]:
        print(f"  {p:.3f} {text[:110]!r}")
    return 0


def main() -> int:
    """Screen the labelled set and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="dev",
                        help="one split, or all of them (a split absent from labels.csv is skipped)")
    parser.add_argument("--list", action="store_true", help="print every file's verdict")
    parser.add_argument("--evidence", action="store_true", help="with --list: the evidence too")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    parser.add_argument("--semantic", action="store_true", help="add the semantic layer")
    parser.add_argument("--leave-split-out", nargs="*", metavar="SPLIT",
                        help="score the layer on each split (default: all fit splits) fitted "
                             "without it")
    parser.add_argument("--leave-author-out", action="store_true",
                        help="score the layer on each exemplar author's sentences fitted without "
                             "them")
    parser.add_argument("--c", type=float,
                        help="with --leave-split-out or --leave-author-out: this C (of the "
                             "regression that picks each injected document's window), not the "
                             "packaged one")
    parser.add_argument("--held-out-author", type=Path, metavar="EXEMPLARS_JSONL",
                        help="score an exemplar file by an author outside the fit with the "
                             "packaged layer alone (e.g. benchmarks/data/injection/exemplars-ex-g.jsonl)")
    parser.add_argument("--refit", nargs="*", metavar="SPLIT",
                        help="fit the layer on the exemplars and these splits (default: all fit "
                             "splits) and write the packaged fit")
    parser.add_argument("--threshold", type=float,
                        help="with --leave-split-out or --leave-author-out: this threshold, not "
                             "MIN_PROBABILITY")
    parser.add_argument("--benign-corpus", type=Path, metavar="CORPUS_JSONL",
                        help="screen a BEIR corpus of benign text (e.g. SciFact) instead")
    parser.add_argument("--limit", type=int, default=1000, help="with --benign-corpus: records")
    parser.add_argument("--offset", type=int, default=0,
                        help="with --benign-corpus: skip this many records first")
    args = parser.parse_args()
    if args.benign_corpus is not None:
        return benign_corpus(args.benign_corpus, args.limit, args.offset)
    if args.held_out_author is not None:
        from ragloom.ingestion.injection.semantic import MIN_PROBABILITY

        return held_out_author(args.held_out_author, args.threshold or MIN_PROBABILITY)
    with (SET / "labels.csv").open(encoding="utf-8") as handle:
        labels = list(csv.DictReader(handle))
    if args.refit is not None:
        return refit(labels, args.refit or list(FIT_SPLITS))
    if args.leave_split_out is not None or args.leave_author_out:
        from ragloom.ingestion.injection.semantic import MIN_PROBABILITY, C

        if args.leave_author_out:
            return leave_author_out(labels, args.c or C, args.threshold or MIN_PROBABILITY)

        present = {r["split"] for r in labels}
        tests = args.leave_split_out or [s for s in FIT_SPLITS if s in present]
        return leave_split_out(labels, tests, args.c or C, args.threshold or MIN_PROBABILITY)
    present = {r["split"] for r in labels}
    splits = [s for s in SPLITS if s in present] if args.split == "all" else [args.split]
    if not present.issuperset(splits):
        print(f"split {args.split!r} is not in {SET / 'labels.csv'}", file=sys.stderr)
        return 2
    results: list[dict[str, object]] = []
    start = time.perf_counter()
    detector = None
    if args.semantic:
        from ragloom.ingestion.injection.semantic import injection_detector

        detector = injection_detector(_embedder())
    for split in splits:
        rows = []
        for label in (r for r in labels if r["split"] == split):
            status, score, signals, evidence = screen(label["file"], detector)
            rows.append({**label, "status": status, "score": str(score)})
            if args.list:
                print(f"{label['label']:9s} {status:12s} {score:5.2f} {label['file']:55s} "
                      f"{','.join(signals)}")
                if args.evidence:
                    print("".join(f"    {line}\n" for line in evidence), end="")
        results.append(report(rows, split))
    elapsed = time.perf_counter() - start
    print(f"\n{sum(1 for r in labels if r['split'] in splits)} files in {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
