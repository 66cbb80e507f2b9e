"""Evaluation datasets: golden YAML sets written by us and BEIR-format directories, read directly.

Both load into one `EvalDataset`: the corpus sources to ingest, the collection to ingest them into,
and the cases with their relevance judgments. Retrieved chunks are mapped back to judged document
ids by `EvalDataset.doc_key`:

- golden YAML: a case's `relevant` refs are suffixes of ingested source ids (`faq.md` matches
  `/abs/path/kb/faq.md`, on a path boundary); a chunk's key is the ref its source id ends with, else
  its source id.
- BEIR: the JSONL loader gives each record the doc_id `<corpus path>#<_id>`; a chunk's key is that
  `_id` (chunk ids are `<doc_id>::<ordinal>::<hash>`).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragloom.errors import ConfigError, LoadError
from ragloom.settings import parse_yaml
from ragloom.stores.paths import validate_collection

UNANSWERABLE = "unanswerable"
CORRECTIVE = "corrective"
BEIR_SPLITS = ("test", "dev", "validation", "train")


class EvalCase(BaseModel):
    """One question with what a good answer and a good ranking look like."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str = Field(min_length=1)
    relevant: dict[str, int] = Field(default_factory=dict,
                                     description="judged document key -> graded relevance (>0)")
    expected: list[str] = Field(default_factory=list, description="substrings a good answer has")
    reference: str | None = Field(None, description="reference answer")
    tags: list[str] = Field(default_factory=list)

    @property
    def answerable(self) -> bool:
        """False for cases tagged `unanswerable` (the right answer is "I don't know")."""
        return UNANSWERABLE not in self.tags


class EvalDataset(BaseModel):
    """A corpus to ingest, the collection it goes into, and the cases to run against it."""

    name: str
    kind: Literal["golden", "beir"]
    path: Path
    corpus: list[str]
    collection: str
    cases: list[EvalCase]
    split: str | None = None
    ref_pool: list[str] = Field(default_factory=list,
                                description="every relevant ref of the full set (kept by limited())")

    def doc_key(self, chunk_id: str, source_id: str) -> str:
        """The judged document id a retrieved chunk belongs to."""
        if self.kind == "beir":
            doc_id = chunk_id.rsplit("::", 2)[0]
            return doc_id.rsplit("#", 1)[-1] if "#" in doc_id else doc_id
        return match_ref(source_id, self.refs) or source_id

    @property
    def refs(self) -> list[str]:
        """Every relevant ref of the set (golden sets), longest first."""
        found = set(self.ref_pool) | {ref for case in self.cases for ref in case.relevant}
        return sorted(found, key=lambda r: (-len(r), r))

    def limited(self, limit: int | None) -> EvalDataset:
        """The first `limit` cases (file order), or all of them; refs keep mapping as before."""
        if limit is None or limit >= len(self.cases):
            return self
        return self.model_copy(update={"cases": self.cases[: max(0, limit)], "ref_pool": self.refs})


def match_ref(source_id: str, refs: Iterable[str]) -> str | None:
    r"""The first ref that source_id ends with on a path boundary (`/`, `\` or start), else None."""
    normalized = source_id.replace("\\", "/")
    for ref in refs:
        r = ref.replace("\\", "/").lstrip("/")
        if normalized == r or normalized.endswith("/" + r):
            return ref
    return None


def collection_name(name: str, prefix: str = "") -> str:
    """A valid Chroma collection name derived from a dataset name (≥ 3 chars, [A-Za-z0-9._-])."""
    raw = f"{prefix}{name}"
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", raw)
    cleaned = re.sub(r"\.{2,}", ".", cleaned).strip("._-")
    if len(cleaned) < 3:
        cleaned = f"eval-{cleaned}" if cleaned else "eval-dataset"
    return validate_collection(cleaned[:512].rstrip("._-"))


# ---------------------------------------------------------------- golden YAML


class _GoldenCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    question: str = Field(min_length=1)
    relevant: list[str] = Field(default_factory=list)
    expected: list[str] = Field(default_factory=list)
    reference: str | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("relevant", "expected", "tags", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        """One string becomes a list; YAML numbers and dates become the text they were written as."""
        items = value if isinstance(value, list) else [value]
        return [_scalar_text(v) for v in items]


def _scalar_text(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


class _GoldenFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str | None = None
    corpus: str | list[str]
    collection: str | None = None
    cases: list[_GoldenCase] = Field(min_length=1)


def _case_lines(text: str) -> list[int]:
    """1-based line of each item of the top-level `cases` sequence (for error messages)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if getattr(key, "value", None) == "cases" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _validation_where(path: Path, exc: ValidationError, lines: list[int]) -> tuple[str, str]:
    first = exc.errors()[0]
    loc = list(first["loc"])
    where = str(path)
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int) and loc[1] < len(lines):
        where = f"{path}:{lines[loc[1]]}"
    return where, f"invalid golden set field {'.'.join(map(str, loc))}: {first['msg']}"


def load_golden(path: str | Path) -> EvalDataset:
    """Read a golden YAML set; errors name the file and line."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise LoadError(f"cannot read golden set: {exc.strerror}", where=str(file)) from exc
    data = parse_yaml(text, file)
    if not isinstance(data, dict):
        raise ConfigError("a golden set is a mapping with `corpus` and `cases`", where=str(file))
    try:
        golden = _GoldenFile.model_validate(data)
    except ValidationError as exc:
        where, what = _validation_where(file, exc, _case_lines(text))
        raise ConfigError(what, where=where,
                          hint="a case has question, relevant, expected, reference, tags") from exc
    lines = _case_lines(text)
    base = file.resolve().parent
    specs = [golden.corpus] if isinstance(golden.corpus, str) else golden.corpus
    corpus = []
    for spec in specs:
        if "://" in spec:
            corpus.append(spec)
            continue
        resolved = (base / spec).resolve()
        if not resolved.exists():
            raise ConfigError(f"corpus path {spec!r} does not exist (resolved to {resolved})",
                              where=str(file), hint="corpus paths are relative to the YAML file")
        corpus.append(str(resolved))
    name = golden.name or file.stem
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for n, item in enumerate(golden.cases):
        case_id = item.id or f"case-{n + 1}"
        where = f"{file}:{lines[n]}" if n < len(lines) else str(file)
        if case_id in seen:
            raise ConfigError(f"duplicate case id {case_id!r}", where=where)
        seen.add(case_id)
        if UNANSWERABLE in item.tags and (item.relevant or item.expected):
            raise ConfigError(f"case {case_id!r} is unanswerable but lists relevant sources or "
                              "expected substrings", where=where)
        cases.append(EvalCase(id=case_id, question=item.question,
                              relevant={ref: 1 for ref in item.relevant}, expected=item.expected,
                              reference=item.reference, tags=item.tags))
    return EvalDataset(name=name, kind="golden", path=file.resolve(), corpus=corpus,
                       collection=golden.collection or collection_name(name, prefix="eval-"),
                       cases=cases)


# ---------------------------------------------------------------- BEIR


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise LoadError(f"invalid JSON: {exc.msg}", where=f"{path}:{line_no}") from exc
                if not isinstance(row, dict) or "_id" not in row:
                    raise LoadError("not a BEIR record (no `_id`)", where=f"{path}:{line_no}")
                rows.append(row)
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror}", where=str(path)) from exc
    return rows


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror}", where=str(path)) from exc
    for line_no, line in enumerate(lines, start=1):
        parts = line.strip().split("\t") if "\t" in line else line.split()
        if not parts or not parts[0]:
            continue
        if line_no == 1 and parts[0] == "query-id":
            continue
        if len(parts) < 3:
            raise LoadError("a qrels line is query-id, corpus-id, score", where=f"{path}:{line_no}")
        try:
            score = int(float(parts[2]))
        except ValueError as exc:
            raise LoadError(f"score {parts[2]!r} is not a number", where=f"{path}:{line_no}") from exc
        if score > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = score
    return qrels


def beir_split(directory: Path, split: str | None = None) -> Path:
    """The qrels file of the requested split, else test/dev/validation/train, else the only one."""
    qrels_dir = directory / "qrels"
    files = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    if not files:
        raise LoadError("no qrels/*.tsv in the BEIR directory", where=str(directory))
    by_name = {f.stem: f for f in files}
    if split is not None:
        if split not in by_name:
            raise ConfigError(f"no qrels split {split!r}", where=str(qrels_dir),
                              hint=f"available splits: {', '.join(sorted(by_name))}")
        return by_name[split]
    for name in BEIR_SPLITS:
        if name in by_name:
            return by_name[name]
    return files[0]


def load_beir(directory: str | Path, split: str | None = None) -> EvalDataset:
    """Read a BEIR directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv, answers.jsonl)."""
    root = Path(directory).resolve()
    corpus = root / "corpus.jsonl"
    queries_file = root / "queries.jsonl"
    for required in (corpus, queries_file):
        if not required.is_file():
            raise LoadError(f"missing {required.name}", where=str(root),
                            hint="a BEIR directory has corpus.jsonl, queries.jsonl and qrels/")
    qrels_file = beir_split(root, split)
    qrels = _read_qrels(qrels_file)
    answers: dict[str, str] = {}
    if (root / "answers.jsonl").is_file():
        for row in _read_jsonl(root / "answers.jsonl"):
            if isinstance(row.get("answer"), str):
                answers[str(row["_id"])] = row["answer"]
    cases = [
        EvalCase(id=str(row["_id"]), question=str(row.get("text", "")).strip() or "?",
                 relevant=qrels[str(row["_id"])], reference=answers.get(str(row["_id"])),
                 expected=[answers[str(row["_id"])]] if str(row["_id"]) in answers else [])
        for row in _read_jsonl(queries_file)
        if str(row["_id"]) in qrels
    ]
    if not cases:
        raise LoadError(f"no query of queries.jsonl has judgments in {qrels_file.name}",
                        where=str(root))
    return EvalDataset(name=root.name, kind="beir", path=root, corpus=[str(corpus)],
                       collection=collection_name(root.name), cases=cases, split=qrels_file.stem)


def load_dataset(path: str | Path, split: str | None = None) -> EvalDataset:
    """A golden YAML file or a BEIR directory, told apart by what the path is."""
    target = Path(path)
    if target.is_dir():
        return load_beir(target, split)
    if target.suffix.lower() in (".yaml", ".yml"):
        return load_golden(target)
    if not target.exists():
        raise LoadError("no such dataset", where=str(target),
                        hint="give a golden .yaml file or a BEIR directory")
    raise ConfigError("unknown dataset format", where=str(target),
                      hint="give a golden .yaml file or a BEIR directory (corpus.jsonl, queries.jsonl, qrels/)")
