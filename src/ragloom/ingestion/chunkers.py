"""Chunkers: split a SourceDocument into Chunks whose offsets point exactly into the document text.

Every chunker computes character spans; `Chunker.split` turns spans into Chunks, so the invariant
`doc.text[c.start:c.end] == c.text` holds for all of them. Sizes are in characters.

- `recursive` (default): paragraphs, then lines, sentences, words, and finally a hard cut;
  siblings are packed up to `size`, up to `overlap` characters carried over between neighbours.
- `sentence`: regex sentences (`ragloom.sentences`, rule `chunk`; no model download) packed up to
  `size`, whole sentences overlapping.
- `structural`: one piece per Markdown heading section (HTML arrives with Markdown headings), a
  heading-only section is joined to the next one, and a section over `size` is split recursively.
- `semantic`: sentences are embedded; a breakpoint falls between adjacent sentences whose cosine
  similarity is below the absolute `semantic_threshold` (an absolute value keeps chunk boundaries of
  one document independent of the other sentences in it, unlike a percentile), and before every
  Markdown heading (never right after one, so a heading stays with its body); a group over `size`
  is split into sentence-packed pieces with the configured overlap. No overlap between groups.
"""

from __future__ import annotations

import bisect
import itertools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.sentences import CHUNK_BREAK, split_sentences
from ragloom.settings import ChunkerSettings
from ragloom.state import Chunk, SourceDocument

if TYPE_CHECKING:
    from ragloom.providers.embeddings import TextEmbedder

Span = tuple[int, int]
FINGERPRINT_VERSION = "1"
STRUCTURE_KEYS = ("page_starts", "headings", "hidden_text")

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_LINE = re.compile(r"\n")
_WORD = re.compile(r"\s+")
_RECURSIVE_LEVELS: tuple[re.Pattern[str], ...] = (_PARAGRAPH, _LINE, CHUNK_BREAK, _WORD)
_SENTENCE_LEVELS: tuple[re.Pattern[str], ...] = (CHUNK_BREAK, _WORD)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)


class Heading(NamedTuple):
    """A Markdown heading: where its line starts and ends, its level and title."""

    start: int
    end: int
    level: int
    title: str


def _fenced_ranges(text: str) -> list[Span]:
    """Spans of fenced code blocks (``` or ~~~), where `#` lines are not headings."""
    marks = list(_FENCE.finditer(text))
    ranges = []
    for opening, closing in zip(marks[::2], marks[1::2], strict=False):
        ranges.append((opening.start(), closing.end()))
    if len(marks) % 2:
        ranges.append((marks[-1].start(), len(text)))
    return ranges


def markdown_headings(text: str) -> list[Heading]:
    """Find ATX Markdown headings (`#` .. `######`) outside fenced code blocks."""
    fences = _fenced_ranges(text)
    headings = []
    for match in _HEADING.finditer(text):
        if any(s <= match.start() < e for s, e in fences):
            continue
        headings.append(Heading(match.start(), match.end(), len(match.group(1)), match.group(2)))
    return headings


def _doc_headings(doc: SourceDocument) -> list[Heading]:
    given = doc.metadata.get("headings")
    if given is None:
        return markdown_headings(doc.text)
    return [Heading(*h) for h in given]


def heading_paths(headings: Sequence[Heading]) -> list[str]:
    """The "A > B > C" path of each heading, following heading levels."""
    stack: list[Heading] = []
    paths = []
    for heading in headings:
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        paths.append(" > ".join(h.title for h in stack))
    return paths


def _cut(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[Span]:
    """Cut [start, end) after each separator match; pieces are contiguous and cover the range."""
    bounds = [start]
    for match in pattern.finditer(text, start, end):
        if start < match.end() < end and match.end() > bounds[-1]:
            bounds.append(match.end())
    bounds.append(end)
    return list(itertools.pairwise(bounds))


def _hard_cut(start: int, end: int, size: int, overlap: int) -> list[Span]:
    """Fixed windows of `size` characters stepping by `size - overlap`."""
    spans = []
    pos = start
    while True:
        stop = min(pos + size, end)
        spans.append((pos, stop))
        if stop >= end:
            return spans
        pos = stop - overlap


def _merge(pieces: Sequence[Span], size: int, overlap: int) -> list[Span]:
    """Pack contiguous pieces (each at most `size`) into spans of at most `size`, with overlap."""
    merged: list[Span] = []
    window: list[Span] = []
    for piece in pieces:
        if window and piece[1] - window[0][0] > size:
            merged.append((window[0][0], window[-1][1]))
            while window and (
                window[-1][1] - window[0][0] > overlap or piece[1] - window[0][0] > size
            ):
                window.pop(0)
        window.append(piece)
    if window:
        merged.append((window[0][0], window[-1][1]))
    return merged


def split_spans(
    text: str,
    start: int,
    end: int,
    size: int,
    overlap: int,
    levels: Sequence[re.Pattern[str]] = _RECURSIVE_LEVELS,
) -> list[Span]:
    """Recursively split [start, end) at the coarsest separator level that fits `size`."""
    if end - start <= size:
        return [(start, end)]
    if not levels:
        return _hard_cut(start, end, size, overlap)
    pieces = _cut(text, start, end, levels[0])
    if len(pieces) == 1:
        return split_spans(text, start, end, size, overlap, levels[1:])
    spans: list[Span] = []
    fitting: list[Span] = []
    for piece in pieces:
        if piece[1] - piece[0] <= size:
            fitting.append(piece)
            continue
        spans.extend(_merge(fitting, size, overlap))
        fitting = []
        spans.extend(split_spans(text, piece[0], piece[1], size, overlap, levels[1:]))
    spans.extend(_merge(fitting, size, overlap))
    return spans


def _trim(text: str, span: Span) -> Span | None:
    """Shrink a span to exclude surrounding whitespace; None when nothing is left."""
    start, end = span
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


class _SectionIndex:
    """Answers "which heading path is in effect for this chunk" with bisect."""

    def __init__(self, text: str, headings: list[Heading]) -> None:
        self._text = text
        self._headings = headings
        self._starts = [h.start for h in headings]
        self._paths = heading_paths(headings)

    def section(self, start: int, end: int) -> str | None:
        """Path at the first non-heading line of [start, end) (leading headings belong to it)."""
        pos = start
        i = bisect.bisect_left(self._starts, start)
        while i < len(self._headings) and self._headings[i].start < end:
            if self._text[pos : self._headings[i].start].strip():
                break
            pos = self._headings[i].end
            i += 1
        j = bisect.bisect_right(self._starts, pos) - 1
        return self._paths[j] if j >= 0 else None


def _base_metadata(doc: SourceDocument) -> dict[str, Any]:
    """The document's scalar metadata, without the structure hints consumed here."""
    return {
        k: v
        for k, v in doc.metadata.items()
        if k not in STRUCTURE_KEYS and isinstance(v, str | int | float | bool)
    }


class Chunker(ABC):
    """Splits documents into chunks; subclasses only decide the character spans."""

    name: str = ""

    def __init__(self, settings: ChunkerSettings) -> None:
        if settings.overlap >= settings.size:
            raise ConfigError(
                f"chunk overlap {settings.overlap} must be smaller than the size {settings.size}",
                where="chunker",
            )
        self.size = settings.size
        self.overlap = settings.overlap

    @abstractmethod
    def spans(self, doc: SourceDocument) -> list[Span]:
        """Character spans of the chunks, in document order."""

    def split(self, doc: SourceDocument) -> list[Chunk]:
        """Split a document into chunks with exact offsets and section/page metadata."""
        spans = [t for t in (_trim(doc.text, s) for s in self.spans(doc)) if t is not None]
        base = _base_metadata(doc)
        sections = _SectionIndex(doc.text, _doc_headings(doc))
        page_starts: list[int] = list(doc.metadata.get("page_starts") or [])
        chunks = []
        for ordinal, (start, end) in enumerate(spans):
            text = doc.text[start:end]
            metadata = {**base, "chunk_index": ordinal}
            section = sections.section(start, end)
            if section:
                metadata["section"] = section
            if page_starts:
                metadata["page"] = max(1, bisect.bisect_right(page_starts, start))
            chunks.append(
                Chunk(
                    id=Chunk.make_id(doc.doc_id, ordinal, text),
                    source_id=doc.source_id,
                    doc_id=doc.doc_id,
                    text=text,
                    start=start,
                    end=end,
                    metadata=metadata,
                )
            )
        return chunks


class RecursiveChunker(Chunker):
    """Paragraph → line → sentence → word splitting, packed to size with overlap."""

    name = "recursive"

    def spans(self, doc: SourceDocument) -> list[Span]:
        """Recursive spans over the whole text."""
        return split_spans(doc.text, 0, len(doc.text), self.size, self.overlap)


class SentenceChunker(Chunker):
    """Regex sentences packed up to size, overlapping by whole sentences."""

    name = "sentence"

    def spans(self, doc: SourceDocument) -> list[Span]:
        """Sentence-packed spans over the whole text."""
        return split_spans(doc.text, 0, len(doc.text), self.size, self.overlap, _SENTENCE_LEVELS)


class StructuralChunker(Chunker):
    """One chunk per Markdown section (heading path in metadata), long sections split further."""

    name = "structural"

    def sections(self, doc: SourceDocument) -> list[Span]:
        """Section spans: preamble, then heading to next heading; heading-only sections join on."""
        headings = _doc_headings(doc)
        bounds = [0] + [h.start for h in headings if h.start > 0] + [len(doc.text)]
        spans = list(itertools.pairwise(bounds))
        ends = {h.start: h.end for h in headings}
        merged: list[Span] = []
        pending: int | None = None
        for start, end in spans:
            body = doc.text[ends.get(start, start) : end]
            if start in ends and not body.strip():
                pending = start if pending is None else pending
                continue
            merged.append((start if pending is None else pending, end))
            pending = None
        if pending is not None:
            merged.append((pending, len(doc.text)))
        return merged

    def spans(self, doc: SourceDocument) -> list[Span]:
        """Sections, each split recursively when longer than size."""
        spans: list[Span] = []
        for start, end in self.sections(doc):
            spans.extend(split_spans(doc.text, start, end, self.size, self.overlap))
        return spans


class SemanticChunker(Chunker):
    """Breaks between adjacent sentences whose embeddings are less similar than the threshold."""

    name = "semantic"

    def __init__(self, settings: ChunkerSettings, embedder: TextEmbedder) -> None:
        super().__init__(settings)
        self.embedder = embedder
        self.threshold = settings.semantic_threshold

    def groups(self, doc: SourceDocument) -> list[list[Span]]:
        """Sentence runs between breakpoints: low similarity, or a heading (kept with its body)."""
        sentences = [(s.start, s.end) for s in split_sentences(doc.text, rule="chunk")]
        if len(sentences) < 2:
            return [sentences] if sentences else []
        heading_starts = {h.start for h in _doc_headings(doc)}
        vectors = self.embedder.embed_array([doc.text[s:e] for s, e in sentences])
        similarity = np.sum(vectors[:-1] * vectors[1:], axis=1)
        groups: list[list[Span]] = [[sentences[0]]]
        for previous, sentence, sim in zip(sentences[:-1], sentences[1:], similarity, strict=True):
            after_heading = previous[0] in heading_starts
            if not after_heading and (sim < self.threshold or sentence[0] in heading_starts):
                groups.append([])
            groups[-1].append(sentence)
        return groups

    def spans(self, doc: SourceDocument) -> list[Span]:
        """Semantic groups, each capped at size by sentence packing."""
        spans: list[Span] = []
        for group in self.groups(doc):
            start, end = group[0][0], group[-1][1]
            spans.extend(
                split_spans(doc.text, start, end, self.size, self.overlap, _SENTENCE_LEVELS)
            )
        return spans


ChunkerFactory = Callable[[ChunkerSettings, "TextEmbedder | None"], Chunker]


def _semantic(settings: ChunkerSettings, embedder: TextEmbedder | None) -> Chunker:
    if embedder is None:
        raise ConfigError(
            "the semantic chunker needs an embedder",
            where="chunker",
            hint="pass get_embedder(settings.embedding) to get_chunker, or choose another chunker",
        )
    return SemanticChunker(settings, embedder)


CHUNKERS: dict[str, ChunkerFactory] = {
    "recursive": lambda settings, _: RecursiveChunker(settings),
    "sentence": lambda settings, _: SentenceChunker(settings),
    "structural": lambda settings, _: StructuralChunker(settings),
    "semantic": _semantic,
}


def get_chunker(settings: ChunkerSettings, embedder: TextEmbedder | None = None) -> Chunker:
    """Build the chunker named in settings; unknown names list the known ones."""
    factory = CHUNKERS.get(settings.name)
    if factory is None:
        raise UnknownNameError("chunker", settings.name, list(CHUNKERS))
    return factory(settings, embedder)


def chunker_fingerprint(settings: ChunkerSettings) -> str:
    """Stable string of everything that changes chunk boundaries (for re-chunking decisions)."""
    parts = [
        f"v{FINGERPRINT_VERSION}",
        settings.name,
        f"size={settings.size}",
        f"overlap={settings.overlap}",
    ]
    if settings.name == "semantic":
        parts.append(f"threshold={settings.semantic_threshold:g}")
    return ":".join(parts)
