"""Chunkers: exact offsets for every chunker on every example document, sizes, overlap, metadata."""

from __future__ import annotations

import functools
import hashlib
import itertools
from pathlib import Path

import numpy as np
import pytest

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.ingestion.chunkers import (
    CHUNKERS,
    Chunker,
    chunker_fingerprint,
    get_chunker,
    markdown_headings,
)
from ragloom.ingestion.loaders import expand_sources, parse_source, read_source
from ragloom.sentences import split_sentences
from ragloom.settings import ChunkerSettings, IngestSettings
from ragloom.state import Chunk, SourceDocument

KB = Path(__file__).resolve().parents[2] / "examples" / "kb"
TOPICS = ("wind", "rain", "price", "battery")


class TopicEmbedder:
    """Deterministic unit vectors: one axis per topic word, plus a small hash-based component."""

    def __init__(self) -> None:
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        lowered = text.lower()
        topical = np.array([float(lowered.count(t)) for t in TOPICS])
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
        noise = np.random.default_rng(seed).normal(size=8) * 0.05
        vector = np.concatenate([topical, noise, [0.3]])
        return vector / np.linalg.norm(vector)

    def embed_array(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.array([self._vector(t) for t in texts], dtype=np.float32)


@functools.cache
def example_docs() -> tuple[SourceDocument, ...]:
    settings = IngestSettings()
    refs, _ = expand_sources([str(KB)])
    return tuple(d for ref in refs for d in parse_source(read_source(ref, settings), settings))


def _doc(text: str, **metadata: object) -> SourceDocument:
    return SourceDocument(doc_id="doc", source_id="src", text=text, metadata=dict(metadata))


def _by_name(name: str) -> SourceDocument:
    return next(d for d in example_docs() if d.source_id.endswith(name))


def _chunker(name: str, size: int = 1000, overlap: int = 150) -> Chunker:
    settings = ChunkerSettings(name=name, size=size, overlap=overlap, semantic_threshold=0.5)
    return get_chunker(settings, embedder=TopicEmbedder())


def assert_valid(doc: SourceDocument, chunks: list[Chunk], size: int) -> None:
    for ordinal, chunk in enumerate(chunks):
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text.strip() == chunk.text != ""
        assert len(chunk.text) <= size
        assert chunk.id == Chunk.make_id(doc.doc_id, ordinal, chunk.text)
        assert (chunk.doc_id, chunk.source_id) == (doc.doc_id, doc.source_id)
        assert chunk.metadata["chunk_index"] == ordinal
        assert not {"page_starts", "headings", "hidden_text"} & chunk.metadata.keys()
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)


@pytest.mark.parametrize("name", sorted(CHUNKERS))
@pytest.mark.parametrize(("size", "overlap"), [(50, 0), (80, 30), (200, 50), (1000, 150)])
def test_offsets_exact_for_every_example_doc(name: str, size: int, overlap: int) -> None:
    chunker = _chunker(name, size, overlap)
    for doc in example_docs():
        chunks = chunker.split(doc)
        assert chunks, doc.doc_id
        assert_valid(doc, chunks, size)
        covered = "".join(doc.text[c.start : c.end] for c in chunks)
        assert set(doc.text.split()) <= set(covered.split()) | set(
            " ".join(c.text for c in chunks).split()
        )


@pytest.mark.parametrize("name", sorted(CHUNKERS))
def test_awkward_texts(name: str) -> None:
    texts = [
        "",
        "   \n\n  ",
        "x" * 777,
        "word " * 400,
        "Line one.\r\nLine two!\n\n\n\nSecond paragraph? Yes.\t\t",
        "# Only a heading",
        "\u00e9\u00e8 \U0001f600 " * 120,
    ]
    chunker = _chunker(name, 100, 20)
    for text in texts:
        doc = _doc(text)
        assert_valid(doc, chunker.split(doc), 100)
    assert chunker.split(_doc("")) == []


def test_recursive_prefers_paragraph_boundaries_and_overlaps() -> None:
    paragraphs = [f"Paragraph {i}. " + "Lumen measures wind. " * 2 for i in range(9)]
    doc = _doc("\n\n".join(paragraphs))
    chunks = _chunker("recursive", 200, 100).split(doc)
    assert_valid(doc, chunks, 200)
    assert all(c.text.startswith("Paragraph") for c in chunks)
    assert any(nxt.start < cur.end for cur, nxt in itertools.pairwise(chunks))


def test_overlap_is_bounded() -> None:
    doc = _doc(" ".join(f"w{i:03d}" for i in range(600)))
    chunks = _chunker("recursive", 100, 30).split(doc)
    for cur, nxt in itertools.pairwise(chunks):
        assert 0 < cur.end - nxt.start <= 30


def test_sentence_chunker_keeps_whole_sentences() -> None:
    sentences = [f"Sentence number {i} talks about the Lumen Hub." for i in range(20)]
    doc = _doc(" ".join(sentences))
    chunks = _chunker("sentence", 150, 60).split(doc)
    assert_valid(doc, chunks, 150)
    for chunk in chunks:
        assert chunk.text.startswith("Sentence") and chunk.text.endswith(".")
    assert any(nxt.start < cur.end for cur, nxt in itertools.pairwise(chunks))


def test_sentence_spans_regex() -> None:
    text = (
        "Version 3.4.1 fixed E204. Wind reaches 65 m/s! Really? yes, e.g. in storms."
        "\n\n# Next\n- item"
    )
    spans = [text[s.start:s.end] for s in split_sentences(text, rule="chunk")]
    assert spans == [
        "Version 3.4.1 fixed E204.",
        "Wind reaches 65 m/s!",
        "Really? yes, e.g. in storms.",
        "# Next",
        "- item",
    ]


def test_structural_sections_and_paths() -> None:
    doc = _by_name("install-guide.md")
    chunks = _chunker("structural", 1000, 100).split(doc)
    assert_valid(doc, chunks, 1000)
    sections = [c.metadata.get("section") for c in chunks]
    assert "Lumen Installation Guide > Pairing the hub > Using the app" in sections
    assert "Lumen Installation Guide > Mounting the sensor array > Mounting on a roof" in sections
    linux = next(c for c in chunks if "port 8642" in c.text)
    assert (
        linux.metadata["section"]
        == "Lumen Installation Guide > Pairing the hub > Without the app (Linux bridge)"
    )
    pairing = next(c for c in chunks if c.text.startswith("## Pairing the hub"))
    assert "### Using the app" in pairing.text
    assert (
        pairing.metadata["section"] == "Lumen Installation Guide > Pairing the hub > Using the app"
    )


def test_structural_splits_long_sections() -> None:
    body = "Readings arrive every 16 seconds. " * 40
    doc = _doc(f"# A\n\n{body}\n\n# B\n\nShort.")
    chunks = _chunker("structural", 300, 50).split(doc)
    assert_valid(doc, chunks, 300)
    assert {c.metadata["section"] for c in chunks} == {"A", "B"}
    assert chunks[-1].text == "# B\n\nShort."


def test_headings_in_code_fences_are_ignored() -> None:
    headings = markdown_headings(_by_name("install-guide.md").text)
    titles = [h.title for h in headings]
    assert "Edit /etc/lumend.toml and set hub_serial" not in titles
    assert titles[0] == "Lumen Installation Guide"
    assert markdown_headings("## Learn C# ##\nx")[0].title == "Learn C#"


@pytest.mark.parametrize("name", ["recursive", "sentence", "semantic"])
def test_other_chunkers_fill_section_from_markdown_headings(name: str) -> None:
    doc = _by_name("troubleshooting.md")
    chunks = _chunker(name, 300, 50).split(doc)
    reset = next(c for c in chunks if "12 seconds" in c.text)
    assert (
        reset.metadata["section"]
        == "Troubleshooting Lumen > Restarting and resetting the hub > Full reset"
    )


def test_html_sections_come_from_rendered_headings() -> None:
    doc = _by_name("privacy.html")
    chunks = _chunker("structural", 400, 0).split(doc)
    frankfurt = next(c for c in chunks if "Frankfurt" in c.text)
    assert frankfurt.metadata["section"] == "Privacy & Data Policy > Where your data is stored"
    assert frankfurt.metadata["title"] == "Lumen Privacy & Data Policy"


def test_pdf_chunks_carry_page_numbers() -> None:
    doc = _by_name("datasheet-lumen-pro.pdf")
    for name in sorted(CHUNKERS):
        chunks = _chunker(name, 200, 40).split(doc)
        wind = next(c for c in chunks if "65 m/s" in c.text)
        dark = next(c for c in chunks if "7 days without sun" in c.text)
        assert (wind.metadata["page"], dark.metadata["page"]) == (2, 3), name
        assert "section" not in wind.metadata
        assert wind.metadata["source_type"] == "pdf"


def test_semantic_breaks_between_topics() -> None:
    wind = " ".join(f"The wind sensor reads gust {i}." for i in range(3))
    price = " ".join(f"The price list shows price {i}." for i in range(3))
    doc = _doc(f"{wind} {price}")
    embedder = TopicEmbedder()
    chunker = get_chunker(
        ChunkerSettings(name="semantic", size=1000, overlap=0, semantic_threshold=0.5), embedder
    )
    chunks = chunker.split(doc)
    assert [c.text for c in chunks] == [wind, price]
    assert embedder.calls == 1


def test_semantic_caps_groups_at_size() -> None:
    doc = _doc(" ".join(f"Rain gauge tip number {i} was recorded." for i in range(30)))
    chunks = _chunker("semantic", 120, 40).split(doc)
    assert len(chunks) > 5
    assert_valid(doc, chunks, 120)


def test_unknown_chunker_lists_known_names() -> None:
    with pytest.raises(UnknownNameError) as caught:
        get_chunker(ChunkerSettings(name="fancy"))
    message = str(caught.value)
    assert "fancy" in message
    assert all(name in message for name in ("recursive", "sentence", "structural", "semantic"))


def test_semantic_needs_an_embedder() -> None:
    with pytest.raises(ConfigError, match="embedder"):
        get_chunker(ChunkerSettings(name="semantic"))


def test_overlap_must_be_smaller_than_size() -> None:
    with pytest.raises(ConfigError, match="overlap"):
        get_chunker(ChunkerSettings(size=100, overlap=100))


def test_fingerprint_is_stable_and_tracks_settings() -> None:
    base = ChunkerSettings()
    assert chunker_fingerprint(base) == chunker_fingerprint(ChunkerSettings())
    assert chunker_fingerprint(base) != chunker_fingerprint(ChunkerSettings(size=800))
    assert chunker_fingerprint(base) != chunker_fingerprint(ChunkerSettings(overlap=100))
    assert chunker_fingerprint(base) != chunker_fingerprint(ChunkerSettings(name="sentence"))
    assert chunker_fingerprint(base) == chunker_fingerprint(ChunkerSettings(semantic_threshold=0.1))
    semantic = ChunkerSettings(name="semantic")
    assert chunker_fingerprint(semantic) != chunker_fingerprint(
        ChunkerSettings(name="semantic", semantic_threshold=0.1)
    )


def test_chunk_ids_are_stable() -> None:
    doc = _by_name("faq.md")
    first = [c.id for c in _chunker("recursive", 300, 50).split(doc)]
    second = [c.id for c in _chunker("recursive", 300, 50).split(doc)]
    assert first == second and len(set(first)) == len(first)
