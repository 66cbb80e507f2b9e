"""Evaluation datasets: the golden YAML set, BEIR directories, collection names, doc mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragloom.errors import ConfigError, LoadError
from ragloom.evaluation.datasets import (
    collection_name,
    load_beir,
    load_dataset,
    load_golden,
    match_ref,
)
from ragloom.stores.paths import validate_collection
from tests.conftest import EXAMPLES_KB, ROOT

GOLDEN = ROOT / "examples" / "eval" / "golden.yaml"
SHARED_DATA = ROOT.parent / "shared" / "data"


def test_golden_set_loads_with_every_kind_of_hard_case() -> None:
    data = load_golden(GOLDEN)
    assert data.kind == "golden"
    assert data.corpus == [str(EXAMPLES_KB.resolve())]
    assert 25 <= len(data.cases) <= 32
    tags = [t for case in data.cases for t in case.tags]
    for tag, at_least in (("vocabulary", 4), ("multi-hop", 4), ("unanswerable", 3), ("corrective", 3)):
        assert tags.count(tag) >= at_least, tag
    ids = [case.id for case in data.cases]
    assert len(ids) == len(set(ids))
    for case in data.cases:
        if case.answerable:
            assert case.relevant and case.expected and case.reference, case.id
        else:
            assert not case.relevant and not case.expected, case.id
    validate_collection(data.collection)


def test_every_golden_ref_names_a_file_of_the_knowledge_base() -> None:
    data = load_golden(GOLDEN)
    files = [str(p) for p in EXAMPLES_KB.iterdir()]
    assert data.refs
    for ref in data.refs:
        assert [f for f in files if match_ref(f, [ref])], ref


def test_golden_values_that_yaml_reads_as_numbers_or_dates_stay_text(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    path = tmp_path / "set.yaml"
    path.write_text("corpus: kb\ncases:\n  - question: When?\n    relevant: a.md\n"
                    "    expected: [2025-03-18, 120, 3.99]\n", encoding="utf-8")
    case = load_golden(path).cases[0]
    assert case.expected == ["2025-03-18", "120", "3.99"]
    assert case.relevant == {"a.md": 1}
    assert case.id == "case-1"


def test_golden_errors_name_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    path = tmp_path / "bad.yaml"
    path.write_text("corpus: kb\ncases:\n  - question: ok?\n  - relevant: [a.md]\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:4: .*cases\.1\.question"):
        load_golden(path)
    path.write_text("corpus: kb\ncases:\n  - id: a\n    question: x\n  - id: a\n    question: y\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:5: duplicate case id 'a'"):
        load_golden(path)
    path.write_text("corpus: kb\ncases:\n  - question: x\n    relevant: a.md\n"
                    "    tags: [unanswerable]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unanswerable but lists relevant"):
        load_golden(path)
    path.write_text("corpus: nowhere\ncases:\n  - question: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="corpus path 'nowhere' does not exist"):
        load_golden(path)
    path.write_text("corpus: kb\ncases: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_golden(path)


def _beir(root: Path, split: str = "test") -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "\n".join(json.dumps({"_id": i, "title": f"T{i}", "text": f"text {i}"}) for i in "abc"),
        encoding="utf-8")
    (root / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": q, "text": f"question {q}?"}) for q in ("q1", "q2", "q3")),
        encoding="utf-8")
    (root / "qrels" / f"{split}.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tc\t2\nq2\tb\t0\nq3\tb\t1\n", encoding="utf-8")
    (root / "answers.jsonl").write_text(json.dumps({"_id": "q1", "answer": "alpha"}), encoding="utf-8")
    return root


def test_beir_directory_keeps_judged_queries_with_graded_relevance(tmp_path: Path) -> None:
    data = load_dataset(_beir(tmp_path / "my set"))
    assert data.kind == "beir" and data.split == "test"
    assert data.collection == "my-set"
    assert [c.id for c in data.cases] == ["q1", "q3"]  # q2 has only a zero judgment
    assert data.cases[0].relevant == {"a": 1, "c": 2}
    assert data.cases[0].reference == "alpha" and data.cases[0].expected == ["alpha"]
    assert data.cases[1].reference is None
    assert data.corpus == [str((tmp_path / "my set" / "corpus.jsonl").resolve())]


def test_beir_split_choice_and_errors(tmp_path: Path) -> None:
    root = _beir(tmp_path / "ds", split="train")
    assert load_beir(root).split == "train"
    with pytest.raises(ConfigError, match="no qrels split 'dev'.*available splits: train"):
        load_beir(root, split="dev")
    (root / "queries.jsonl").unlink()
    with pytest.raises(LoadError, match="missing queries.jsonl"):
        load_beir(root)
    with pytest.raises(LoadError, match="no such dataset"):
        load_dataset(tmp_path / "absent.yaml.txt")


def test_doc_keys_map_chunks_back_to_judged_documents(tmp_path: Path) -> None:
    beir = load_dataset(_beir(tmp_path / "ds"))
    assert beir.doc_key("/x/ds/corpus.jsonl#c::3::abcdef012345", "/x/ds/corpus.jsonl") == "c"
    golden = load_golden(GOLDEN)
    assert golden.doc_key("/any/kb/api.md::0::abc", "/any/kb/api.md") == "api.md"
    assert golden.doc_key("/any/kb/myapi.md::0::abc", "/any/kb/myapi.md") == "/any/kb/myapi.md"


def test_refs_match_on_path_boundaries_only() -> None:
    assert match_ref("/kb/docs/faq.md", ["faq.md"]) == "faq.md"
    assert match_ref("/kb/docs/faq.md", ["docs/faq.md"]) == "docs/faq.md"
    assert match_ref("faq.md", ["faq.md"]) == "faq.md"
    assert match_ref("/kb/nofaq.md", ["faq.md"]) is None
    assert match_ref("C:\\kb\\faq.md", ["faq.md"]) == "faq.md"


@pytest.mark.parametrize("name,expected", [
    ("scifact", "scifact"), ("ab", "eval-ab"), ("my data/set!", "my-data-set"),
    ("..x..", "eval-x"), ("a..b", "a.b"),
])
def test_collection_names_are_valid_chroma_names(name: str, expected: str) -> None:
    assert collection_name(name) == expected
    validate_collection(collection_name(name))


@pytest.mark.skipif(not (SHARED_DATA / "hotpotqa").is_dir(), reason="shared eval data not present")
def test_shared_beir_sets_read_unchanged() -> None:
    hotpot = load_dataset(SHARED_DATA / "hotpotqa")
    assert len(hotpot.cases) == 40 and hotpot.split == "test"
    assert all(c.reference and len(c.relevant) == 2 for c in hotpot.cases)
    scifact = load_dataset(SHARED_DATA / "scifact")
    assert scifact.split == "train" and len(scifact.cases) == 809
    assert scifact.collection == "scifact"
