"""Injection screening on the labelled set in tests/data/injection: detection and false positives.

    python benchmarks/injection.py [--split dev|holdout|fresh|all] [--semantic] [--list [--evidence]]
                                   [--json OUT]
    python benchmarks/injection.py --cv       # choose C and the threshold: 5-fold CV on dev only
    python benchmarks/injection.py --refit    # fit on dev, write the packaged exemplars and fit

Every file goes through the real loaders (`read_source`, `parse_source`) and `scan_injection`, as
in the ingest graph's validate node. A source is *quarantined* when any of its documents is
rejected (or its bytes are), *flagged* when any is suspicious, else clean. Prints, per split, the
detection rate (quarantined or flagged) of the injected documents and the quarantined and flagged
rates of the benign ones, overall and per class. `--list` prints every file's verdict, score and
signals (`--evidence`: and the evidence). `--semantic` adds the semantic layer
(`ragloom.ingestion.injection_semantic`) over the document's windows: its chunks under the default
chunker plus its hidden and decoded passages, embedded with the packaged MiniLM. Never tune on `holdout` or `fresh`: score them once, at the end.
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

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "data" / "injection"
SPLITS = ("dev", "holdout", "fresh", "probe", "fresh2")
"""In the order written; `fresh2` (held out from the detector's authors) may be absent."""


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


def windows(doc) -> list[str]:  # type: ignore[no-untyped-def]
    """A document's windows as ingest sees them: default chunks, then hidden and decoded passages."""
    from ragloom.ingestion.chunkers import get_chunker
    from ragloom.ingestion.injection_semantic import extra_windows
    from ragloom.settings import ChunkerSettings

    return [c.text for c in get_chunker(ChunkerSettings()).split(doc)] + extra_windows(doc)


def screen(path: Path, semantic: bool = False) -> tuple[str, float, list[str], list[str]]:
    """(status, score, signals, evidence) of one source, as the ingest graph would decide."""
    from ragloom.errors import LoadError, RejectedSourceError
    from ragloom.ingestion.validation import scan_injection

    try:
        documents = _documents(path)
    except RejectedSourceError as err:
        return "quarantined", 0.0, list(err.signals), [str(err)]
    except LoadError as err:
        return "failed", 0.0, [], [str(err)]
    verdicts = [scan_injection(doc) for doc in documents]
    if semantic:
        from ragloom.ingestion.injection_semantic import injection_detector

        embedder = _embedder()
        detector = injection_detector(embedder)
        verdicts = [detector.verdict(v, float(detector.probabilities(
                        embedder.embed_array(windows(doc))).max(initial=0.0)))
                    for v, doc in zip(verdicts, documents, strict=True)]
    worst = max(verdicts, key=lambda v: (["clean", "suspicious", "rejected"].index(v.status), v.score))
    status = {"rejected": "quarantined", "suspicious": "flagged", "clean": "clean"}[worst.status]
    return status, worst.score, worst.signals, worst.evidence


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


def _dev_windows(labels: list[dict[str, str]]) -> list[tuple[str, str, list[str], np.ndarray]]:
    """(file, label, windows, embedded windows) of every dev source the loaders accept."""
    from ragloom.errors import LoadError, RejectedSourceError

    out = []
    for row in (r for r in labels if r["split"] == "dev"):
        try:
            texts = [w for doc in _documents(SET / row["file"]) for w in windows(doc)]
        except (LoadError, RejectedSourceError):
            continue
        if texts:
            out.append((row["file"], row["label"], texts, _embedder().embed_array(texts)))
    return out


def exemplars_of(sources: list[tuple[str, str, list[str], np.ndarray]], c: float):  # type: ignore[no-untyped-def]
    """Labelled windows (multiple-instance): every benign window is benign; of an injected source,
    only the window a first fit (all its windows injected) scores highest is `injected`."""
    from ragloom.providers.exemplar_model import fit_matrix

    matrix = np.concatenate([m for *_, m in sources])
    first = fit_matrix(matrix, [label for _, label, texts, _ in sources for _ in texts], c)
    column = first.labels.index("injected")
    texts, labels, rows = [], [], []
    for _, label, source_texts, embedded in sources:
        keep = range(len(source_texts)) if label == "benign" else \
            [int(first.probabilities(embedded)[:, column].argmax())]
        for i in keep:
            texts.append(source_texts[i])
            labels.append(label)
            rows.append(embedded[i])
    return texts, labels, np.array(rows)


def cross_validate(labels: list[dict[str, str]]) -> None:
    """5-fold CV on dev (folds by source): detection and benign flagged per C and threshold."""
    from ragloom.providers.exemplar_model import fit_matrix

    sources = _dev_windows(labels)
    rules = {row["file"]: screen(SET / row["file"])[0] for row in labels if row["split"] == "dev"}
    for c in (1.0, 4.0, 16.0):
        held: dict[str, float] = {}
        for fold in range(5):
            train = [s for i, s in enumerate(sources) if i % 5 != fold]
            _, train_labels, matrix = exemplars_of(train, c)
            fit = fit_matrix(matrix, train_labels, c)
            column = fit.labels.index("injected")
            for i, (name, _, _, embedded) in enumerate(sources):
                if i % 5 == fold:
                    held[name] = float(fit.probabilities(embedded)[:, column].max())
        for threshold in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98):
            status = {name: ("flagged" if s == "clean" and held.get(name, 0.0) >= threshold else s)
                      for name, s in rules.items()}
            rows = [{**r, "status": status[r["file"]]} for r in labels if r["split"] == "dev"]
            inj = rates([r for r in rows if r["label"] == "injected"])
            ben = rates([r for r in rows if r["label"] == "benign"])
            alone = {r["file"]: held.get(r["file"], 0.0) >= threshold for r in rows}
            layer_inj = sum(alone[r["file"]] for r in rows if r["label"] == "injected") / inj["n"]
            layer_ben = sum(alone[r["file"]] for r in rows if r["label"] == "benign") / ben["n"]
            print(f"C={c:g} t={threshold:.2f}: with the rules detected {inj['detected']:.3f}, "
                  f"benign flagged {ben['flagged']:.3f}, quarantined {ben['quarantined']:.3f}; "
                  f"layer alone: injected {layer_inj:.3f}, benign {layer_ben:.3f}")


def refit(labels: list[dict[str, str]]) -> int:
    """Fit the layer on dev windows; write the packaged exemplars and their fit."""
    from ragloom.ingestion import injection_semantic as sem
    from ragloom.providers.exemplar_model import Exemplars, fit_key, fit_matrix, write_fit

    embedder = _embedder()
    if sem.unsuited(embedder):
        print(f"refit needs the {sem.TUNED_MODEL} embedder", file=sys.stderr)
        return 1
    texts, window_labels, matrix = exemplars_of(_dev_windows(labels), sem.C)
    with sem.EXEMPLARS.open("w", encoding="utf-8") as handle:
        for text, label in zip(texts, window_labels, strict=True):
            handle.write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")
    key = fit_key(embedder, Exemplars(tuple(texts), tuple(window_labels)), sem.C)
    assert key is not None
    write_fit(sem.PACKAGED_FIT, key, fit_matrix(matrix, window_labels, sem.C))
    print(f"wrote {sem.EXEMPLARS} ({len(texts)} windows) and {sem.PACKAGED_FIT} ({key})")
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
    parser.add_argument("--cv", action="store_true", help="cross-validate the layer on dev")
    parser.add_argument("--refit", action="store_true", help="refit the layer on dev and write it")
    args = parser.parse_args()
    with (SET / "labels.csv").open(encoding="utf-8") as handle:
        labels = list(csv.DictReader(handle))
    if args.cv:
        cross_validate(labels)
        return 0
    if args.refit:
        return refit(labels)
    present = {r["split"] for r in labels}
    splits = [s for s in SPLITS if s in present] if args.split == "all" else [args.split]
    if not present.issuperset(splits):
        print(f"split {args.split!r} is not in {SET / 'labels.csv'}", file=sys.stderr)
        return 2
    results: list[dict[str, object]] = []
    start = time.perf_counter()
    for split in splits:
        rows = []
        for label in (r for r in labels if r["split"] == split):
            status, score, signals, evidence = screen(SET / label["file"], args.semantic)
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
