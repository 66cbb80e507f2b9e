"""The offline extractive answer: the passage units that answer the question, best first, no padding.

A passage is read as *answer units*, not only sentences:

- prose sentences and list items (with the heading they sit under as context);
- definition lines (`Term: meaning`, `Term — meaning`), one unit each;
- a `TERM — meaning` heading together with the first sentence of its body (the heading alone is
  never a claim; question headings, as in FAQs, are context only);
- table rows (Markdown or `a | b` pipe tables) and CSV records (one row per document, or a whole
  CSV file), rendered as `key column: key; column: value` with the columns that match the
  question.

Each unit is scored for the question: IDF-weighted question-term coverage (terms of its heading or
record key count half), blended with the embedding similarity of the unit in its context when an
embedder is given, a small rank prior, and a small bonus for a number when the question asks for
one. The best unit comes first, except where the question's shape says what answers it:

- a question that asks several things (`How many ..., and what happens ...?`, or two questions)
  opens with the best unit for each part, in the order asked, those of one passage joined into
  one sentence;
- a question asking for a procedure (`How do I ...?`) opens with the steps (instructions: an
  imperative verb and its object) of the best unit's section, in reading order, then that unit.

After these, a further unit is kept only while it adds support: above a relative and an absolute
floor, no big drop from the unit before it, covering a question term the
kept units do not (or, when the best unit states a value of the asked type, another value of it:
"two-year warranty", then "three years once registered"), not repeating them, and, from a section
not quoted yet, naming one of the names or codes the question is about, when it has any.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ragloom.nodes.assemble import is_suspicious, suspicious_signals
from ragloom.nodes.text import clip, stopwords, strip_markers, tokenize, words
from ragloom.sentences import split_sentences
from ragloom.state import ScoredChunk

if TYPE_CHECKING:
    from ragloom.providers.embeddings import TextEmbedder

IDK = "I don't know"
MIN_RELEVANCE = 0.25
"""The best unit must reach this relevance, else the answer is IDK."""
EXTRA_FLOOR = 0.35
"""Absolute floor of every further unit."""
RELATIVE_FLOOR = 0.8
"""A further unit must reach this share of the best unit's relevance."""
BIG_DROP = 0.1
"""Selection stops where relevance falls by more than this from one unit to the next."""
MIN_GAIN = 0.1
"""A further unit must cover at least this share of the question's term weight anew."""
SEMANTIC_WEIGHT = 0.6
FOCUS_WEIGHT = 1.5
CONTEXT_WEIGHT = 0.5
RANK_PRIOR = 0.1
TYPE_BONUS = 0.08
"""For questions asking for a date, duration, price or number: units that state one."""
LEAD_BONUS = 0.1
"""Added to the key bonus for the first sentence under a term heading the question names: the
definition comes before the section's details."""
KEY_BONUS = 0.25
"""For units whose key (the term a heading or definition line defines, a row's key) the
question names: they answer it directly."""
REDUNDANT_JACCARD = 0.7
MIN_UNIT_WORDS = 3
MAX_FIELDS = 3
FIELDS_PER_ROW = 4
"""Records with at most this many value columns are one unit per row, wider ones one per column."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s*(=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_FIELD = re.compile(r"^\s*(?:\*\*)?([^:|\n]{1,48}?)(?:\*\*)?\s*(?::|\s[—–]\s)\s*(\S.*)$")
_TERM_HEADING = re.compile(r"^(.{1,40}?)\s+[—–-]\s+(\S.*)$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_PART_BREAK = re.compile(r"(?:,\s*|\s+)(?:and|but)\s+(?=(?:what|when|where|why|how)\b)|\?\s+(?=\S)",
                         re.IGNORECASE)
"""Where a question that asks several things starts its next part: `and` before a question word
that opens no relative clause (`and who`, `and whose`, `and was` mostly continue a description of
one entity), or a new question after a question mark (not a semicolon: `... all winter; did an
update fix it?` asks one thing)."""
_PROCEDURE = re.compile(r"^\s*how\s+(?:do|can|could|should|would|must|shall)\s+(?:i|we|you|one)\b|"
                        r"^\s*how\s+to\b|\bsteps?\s+(?:to|for)\b", re.IGNORECASE)
"""A question asking for a procedure (`How do I reset ...?`)."""
_DETERMINER = r"(?:the|a|an|your|its|their|our|my|this|these|those|both|all|each|every|any|some|it|them)"
_INSTRUCTION = re.compile(rf"^(?:[^:]{{1,60}}:\s+)?([A-Z][a-z]+)\s+{_DETERMINER}\b")
_TERMINAL = re.compile(r"[.!?;:…]['\"”’)\]]*$")
_DATE = (r"\b\d{4}-\d{2}-\d{2}\b|\b(?:1[5-9]|20)\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|"
         r"sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|"
         r"sep|oct|nov|dec)[a-z]*\b")
_NUMBER_WORDS = r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
_DURATION = (rf"\b(?:\d+(?:[.,]\d+)?|{_NUMBER_WORDS})\s*(?:-\s*)?(?:s|sec|seconds?|min|minutes?|h|hours?|days?|weeks?|"
             r"months?|years?)\b")
_OTHER_NUMBER = (r"\bhow\s+(?:many|much|far|big|old|high|fast|heavy|large|wide|tall)\b|"
                 r"\b(?:what|which)\s+(?:is\s+the\s+|was\s+the\s+)?(?:number|percentage|version|"
                 r"port|size|temperature|range|speed|weight|age|rate|amount|firmware|release)\b")
_ANSWER_TYPES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(question, re.IGNORECASE), re.compile(unit, re.IGNORECASE))
    for question, unit in (
        (r"\bwhen\b|\b(?:what|which|in\s+what)\s+(?:date|year|day|month)\b", _DATE),
        (r"\bhow\s+(?:long|often|soon)\b", _DURATION),
        (r"\b(?:cost|costs|price|prices|priced|fee|fees)\b|\bhow\s+much\b",
         r"(?:€|\$|£|\b(?:eur|usd|gbp|euros?|dollars?|pounds?|price\w*)\b|\bfree\b(?!\s+(?!of\b)[a-z]))"),
        (_OTHER_NUMBER, r"\d+(?:[.,]\d+)*"),
    )
)
"""(question pattern, answer pattern) pairs: a question asking for a date, a duration, a price or
another number favours units that state one (the first pattern the question matches). "Free" is a
price only as a predicate (`Price: free`, `free of charge`), not before a noun (`free accounts`)."""


class Unit(NamedTuple):
    """One candidate answer unit of a passage; `key` is the term it defines or the row key,
    `section` the heading path it sits under; `lead` marks the first sentence under a term
    heading (the definition)."""

    marker: int
    text: str
    context: str
    key: str = ""
    section: str = ""
    lead: bool = False


class _Scored(NamedTuple):
    """A unit with its relevance to the question (floors and IDK use it), its ranking score
    (relevance plus answer-type, key and rank priors) and the tokens the selection rules need."""

    score: float
    relevance: float
    unit: Unit
    tokens: frozenset[str]
    values: frozenset[str] = frozenset()
    """The values of the asked answer type (a duration, a date, a price, a number) the unit states."""
    similarity: float = 0.0
    """Embedding similarity of the unit in its context to the question (0 offline)."""
    order: int = 0
    """Position of the unit in the passages, in reading order."""


def _cells(line: str) -> list[str] | None:
    """The cells of a table row (`| a | b |` or `a | b`), or None when the line is no row."""
    stripped = line.strip()
    if stripped.count("|") < (1 if not stripped.startswith("|") else 2):
        return None
    if not stripped.startswith("|") and " | " not in stripped:
        return None
    return [c.strip().strip("`") for c in stripped.strip("|").split("|")]


def _record_units(marker: int, header: Sequence[str], row: Sequence[str], context: str) -> list[Unit]:
    """Units of one table row or CSV record: the whole row when narrow, else key + one column."""
    pairs = [(h or f"column {i + 1}", v.strip()) for i, (h, v) in enumerate(zip(header, row, strict=False))]
    pairs = [(h, v) for h, v in pairs if v]
    if len(pairs) < 2:
        return []
    key, rest = pairs[0], pairs[1:]
    head = f"{key[0]}: {key[1]}"
    prefix = f"{context}: " if context else ""
    if len(rest) <= FIELDS_PER_ROW:
        text = "; ".join(f"{h}: {v}" for h, v in pairs) + "."
        return [Unit(marker, text, prefix + text, key[1])]
    return [Unit(marker, f"{head}; {h}: {v}.", f"{prefix}{head}; {h}: {v}", key[1])
            for h, v in rest]


def _csv_units(marker: int, text: str, context: str) -> list[Unit] | None:
    """Units of a CSV source: a one-row document (`column: value` lines) or a whole CSV file."""
    lines = [line for line in text.split("\n") if line.strip()]
    fields = [_FIELD.match(line) for line in lines]
    if lines and all(fields):
        header = [m.group(1).strip() for m in fields if m]
        row = [m.group(2).strip() for m in fields if m]
        return _record_units(marker, header, row, "")
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    if len(rows) < 2 or len(rows[0]) < 2:
        return None
    return [u for row in rows[1:] if any(c.strip() for c in row)
            for u in _record_units(marker, rows[0], row, context)]


def _term_of(heading: str) -> str:
    """The term a `TERM — meaning` heading defines (`E204 — Rain gauge blocked`), else ''."""
    match = _TERM_HEADING.match(heading)
    return match.group(1).strip() if match and not heading.endswith("?") else ""


def _field_term(text: str) -> str:
    """The term of a definition line (`Wind speed: 0 to 65 m/s`), else ''."""
    match = _FIELD.match(text)
    return match.group(1).strip() if match else ""


class _Reader:
    """Turn one passage's text into answer units, tracking headings, tables and code fences."""

    def __init__(self, marker: int, title: str, heading: str) -> None:
        self.marker = marker
        self.title = title
        self.heading = heading
        self.term = _term_of(heading)
        self.term_claimed = False
        self.units: list[Unit] = []
        self.paragraph: list[str] = []
        self.table: list[str] | None = None

    def context(self) -> str:
        """The heading in effect, with the document title when it differs."""
        parts = [p for p in (self.title, self.heading) if p]
        return " > ".join(dict.fromkeys(parts))

    def add(self, text: str) -> None:
        """Add a sentence or line unit; under a term heading it carries the heading (the heading
        holds the claim: `E204 — Rain gauge blocked: The tipping bucket ...`), the section's
        first sentence marked as its lead."""
        text = " ".join(strip_markers(_BULLET.sub("", text)).split())
        if not text or text.endswith("?"):
            return
        if len(words(text)) < MIN_UNIT_WORDS and not self.term:
            return
        if self.term:
            joined = f"{self.heading}: {text[0].upper()}{text[1:]}"
            self.units.append(Unit(self.marker, joined, f"{self.title}: {joined}", self.term,
                                   self.context(), lead=not self.term_claimed))
            self.term_claimed = True
            return
        context = self.context()
        self.units.append(Unit(self.marker, text, f"{context}: {text}" if context else text,
                               _field_term(text), context))

    def flush(self) -> None:
        """Emit the sentences of the paragraph being read."""
        if self.paragraph:
            for sentence in split_sentences("\n".join(self.paragraph)):
                self.add(sentence.text)
            self.paragraph = []

    def set_heading(self, heading: str) -> None:
        """Start a new section."""
        self.flush()
        self.table = None
        self.heading = heading
        self.term = _term_of(heading)
        self.term_claimed = False

    def row(self, cells: list[str]) -> None:
        """A table row: the first one is the header."""
        self.flush()
        if self.table is None:
            self.table = cells
        else:
            self.units.extend(_record_units(self.marker, self.table, cells, self.context()))


def _looks_like_heading(line: str, following: str, block_start: bool, title: str) -> bool:
    """A plain-text heading (PDF, text, JSONL titles): the document title, a short first line of a
    block without end punctuation followed by more text, or such a line alone in its block."""
    stripped = line.strip()
    if stripped == title.strip():
        return True
    if not block_start or _TERMINAL.search(stripped) or _cells(stripped) is not None:
        return False
    limit = 6 if following.strip() else 15
    return len(words(stripped)) <= limit and len(stripped) <= 120


def passage_units(marker: int, scored: ScoredChunk) -> list[Unit]:
    """The answer units of one passage."""
    chunk = scored.chunk
    title = str(chunk.metadata.get("title") or "")
    section = str(chunk.metadata.get("section") or "").split(" > ")[-1]
    if chunk.metadata.get("source_type") == "csv":
        found = _csv_units(marker, chunk.text, title)
        if found is not None:
            return found
    reader = _Reader(marker, title, section if section != title else "")
    lines = chunk.text.split("\n")
    in_code = False
    previous = ""
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if _FENCE.match(line):
            reader.flush()
            in_code = not in_code
        elif in_code:
            pass
        elif (match := _HEADING.match(line)) is not None:
            reader.set_heading(match.group(1).strip())
        elif _SETEXT.match(following) and line.strip() and not previous.strip():
            reader.set_heading(line.strip())
        elif _SETEXT.match(line) and previous.strip():
            pass
        elif not line.strip():
            reader.flush()
        elif _TABLE_SEPARATOR.match(line) and reader.table is not None:
            pass
        elif (cells := _cells(line)) is not None and len(cells) >= 2:
            reader.row(cells)
        elif _looks_like_heading(line, following, not previous.strip() or i == 0, title):
            reader.set_heading(line.strip())
        elif _BULLET.match(line) or (_FIELD.match(line) and len(line) <= 200 and (
                not previous.strip() or bool(_TERMINAL.search(previous.strip()))
                or bool(_FIELD.match(previous)))):
            reader.flush()
            reader.paragraph = [line]
        else:
            reader.paragraph.append(line)
        previous = line
    reader.flush()
    return reader.units


def _idf(question_terms: set[str], passage_terms: Sequence[set[str]]) -> dict[str, float]:
    """IDF-ish weights of the question terms over the passage set; a term no passage has weighs
    as much as the rarest one present (it lowers every unit's coverage alike)."""
    n = len(passage_terms)
    df = {t: sum(1 for terms in passage_terms if t in terms) for t in question_terms}
    weights = {t: math.log(1.0 + n / d) for t, d in df.items() if d}
    rarest = max(weights.values(), default=math.log(1.0 + n))
    return {t: weights.get(t, rarest) for t in question_terms}


def missing_names(question: str, passages: Sequence[ScoredChunk]) -> list[str]:
    """Names the question uses (capitalised words past its first) that no passage contains: the
    passages cannot be about what it asks (`Lumen Ultra` when only Pro and Max are described)."""
    present = {t for p in passages for t in tokenize(p.chunk.text)}
    present |= {t for p in passages for t in tokenize(str(p.chunk.metadata.get("title") or ""))}
    names = []
    for word in re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w-]*", question.strip()):
        terms = tokenize(re.sub(r"['’]s$", "", word))
        if terms and not set(terms) & present:
            names.append(word)
    return names


def _similarities(question: str, contexts: list[str], embedder: TextEmbedder | None) -> list[float]:
    """Cosine similarity of each unit in its context to the question; zeros offline."""
    if embedder is None or not contexts:
        return [0.0] * len(contexts)
    vectors = embedder.embed_array([question, *contexts])
    return [float(v) for v in vectors[1:] @ vectors[0]]


def _focus_terms(question: str) -> set[str]:
    """Terms of the names and codes a question is about: capitalised words past its first, and
    words with digits (`E204`, `v2`)."""
    names = re.findall(r"(?<!^)\b[A-Z][\w-]*|\b\w*\d\w*\b", question.strip())
    return {t for name in names for t in tokenize(name)}


def question_weights(question: str, passages: Sequence[ScoredChunk]) -> dict[str, float]:
    """The question's stemmed content terms with their IDF-ish weights over the passages; the
    names and codes it asks about weigh FOCUS_WEIGHT times more."""
    weights = _idf(set(tokenize(question)), [set(tokenize(p.chunk.text)) for p in passages])
    focus = _focus_terms(question)
    return {t: w * FOCUS_WEIGHT if t in focus else w for t, w in weights.items()}


def _relevance(weights: dict[str, float], tokens: frozenset[str], context: frozenset[str],
               similarity: float | None) -> float:
    """A unit's relevance: the weighted share of the question terms it covers (its context's
    terms at CONTEXT_WEIGHT), blended with its embedding similarity when there is one."""
    covered = sum(w for t, w in weights.items() if t in tokens)
    covered += CONTEXT_WEIGHT * sum(w for t, w in weights.items() if t in context)
    coverage = covered / (sum(weights.values()) or 1.0)
    if similarity is None:
        return coverage
    return SEMANTIC_WEIGHT * similarity + (1 - SEMANTIC_WEIGHT) * coverage


def score_units(question: str, passages: Sequence[ScoredChunk],
                embedder: TextEmbedder | None = None) -> list[_Scored]:
    """Every answer unit of the passages with its relevance to the question, best first."""
    weights = question_weights(question, passages)
    asked = set(weights)
    if not asked:
        return []
    units = [u for m, p in enumerate(passages, start=1) for u in passage_units(m, p)]
    similarity = _similarities(question, [u.context for u in units], embedder)
    wanted = next((unit for q, unit in _ANSWER_TYPES if q.search(question)), None)
    found: list[_Scored] = []
    for order, (unit, sim) in enumerate(zip(units, similarity, strict=True)):
        tokens = frozenset(tokenize(unit.text))
        context = frozenset(tokenize(unit.context)) - tokens
        relevance = _relevance(weights, tokens, context, None if embedder is None else sim)
        score = relevance + RANK_PRIOR / unit.marker
        values = frozenset(m.group(0).lower() for m in wanted.finditer(unit.text)) if wanted else frozenset()
        if values:
            score += TYPE_BONUS
        key = set(tokenize(unit.key))
        if key and key <= asked:
            score += KEY_BONUS + (LEAD_BONUS if unit.lead else 0.0)
        found.append(_Scored(score, relevance, unit, tokens, values, sim, order))
    return sorted(found, key=lambda s: -s.score)


def _cite(sentence: str, marker: int) -> str:
    """Place the marker before the sentence's final punctuation."""
    match = re.match(r"^(.*?)([.!?]+['\"”’)]*)$", sentence, re.DOTALL)
    if match:
        return f"{match.group(1)} [{marker}]{match.group(2)}"
    return f"{sentence} [{marker}]"


def _joined(units: Sequence[Unit]) -> str:
    """One sentence of one or more units, each with its marker, joined by semicolons (a function
    word opening a later unit lowercased)."""
    cited = [_cite(u.text, u.marker) for u in units]
    out = cited[0]
    for text in cited[1:]:
        first = text.split(" ", 1)[0]
        if first.lower() in stopwords():
            text = text[0].lower() + text[1:]
        out = re.sub(r"[.!?]+(['\"”’)]*)$", r"\1", out) + "; " + text
    return out


def _redundant(tokens: frozenset[str], chosen: Sequence[_Scored]) -> bool:
    """True when tokens mostly repeat an already chosen unit."""
    for other in chosen:
        union = tokens | other.tokens
        if union and len(tokens & other.tokens) / len(union) >= REDUNDANT_JACCARD:
            return True
    return False


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks several things (`How many requests ..., and what happens
    above the limit?`, `What is X? Where is it?`), in the order asked; one part otherwise."""
    parts = [p.strip(" ,?;") for p in _PART_BREAK.split(question.strip())]
    return [p for p in parts if p] or [question]


def _part_choice(ranked: Sequence[_Scored], part: str, weights: dict[str, float],
                 semantic: bool, min_relevance: float) -> _Scored | None:
    """The unit that best answers one part of a question: relevance with the coverage of that
    part's terms, the unit's priors kept; it must reach min_relevance for that part."""
    part_weights = {t: weights[t] for t in set(tokenize(part)) if t in weights}
    if not part_weights:
        return None
    best: tuple[float, _Scored] | None = None
    for candidate in ranked:
        context = frozenset(tokenize(candidate.unit.context)) - candidate.tokens
        if not part_weights.keys() & (candidate.tokens | context):
            continue
        relevance = _relevance(part_weights, candidate.tokens, context,
                               candidate.similarity if semantic else None)
        score = relevance + candidate.score - candidate.relevance
        if relevance < min_relevance:
            continue
        if best is None or score > best[0]:
            best = (score, candidate)
    return best[1] if best else None


def is_instruction(text: str) -> bool:
    """Whether a unit is an instruction (a procedure's step): it opens, after an optional `label:`,
    with a word that is no function word followed by a determiner (`Hold the PAIR button ...`,
    `Remove the funnel ...`) — an imperative verb and its object."""
    match = _INSTRUCTION.match(text)
    return match is not None and match.group(1).lower() not in stopwords()


def _parts_opening(ranked: list[_Scored], question: str, weights: dict[str, float],
                   semantic: bool, min_relevance: float) -> list[list[_Scored]]:
    """One unit per asked part in the order asked, those of one passage in one sentence; [] when
    the question asks one thing or one unit answers every part."""
    parts = question_parts(question)
    if len(parts) < 2:
        return []
    chosen = [c for part in parts
              if (c := _part_choice(ranked, part, weights, semantic, min_relevance)) is not None]
    units = list(dict.fromkeys(chosen))
    return _by_passage(units) if len(units) > 1 else []


def _procedure_opening(ranked: list[_Scored], question: str,
                       min_relevance: float) -> list[list[_Scored]]:
    """For a procedure question, the steps of the best unit's section in reading order, then
    that unit; [] for other questions or a section without steps."""
    if not _PROCEDURE.search(question):
        return []
    top = ranked[0]
    section = (top.unit.marker, top.unit.section)
    steps = sorted((c for c in ranked if (c.unit.marker, c.unit.section) == section
                    and c.relevance >= min_relevance and is_instruction(c.unit.text)),
                   key=lambda c: c.order)
    if not steps:
        return []
    return [[step] for step in steps] + ([] if top in steps else [[top]])


def _opening(ranked: list[_Scored], question: str, weights: dict[str, float], semantic: bool,
             min_relevance: float) -> list[list[_Scored]]:
    """The answer's first units, as sentences of one or more units (see the module docstring):
    the parts of a question or a procedure's steps; else the best unit."""
    return (_parts_opening(ranked, question, weights, semantic, min_relevance)
            or _procedure_opening(ranked, question, min_relevance) or [[ranked[0]]])


def _by_passage(units: list[_Scored]) -> list[list[_Scored]]:
    """Consecutive units of one passage as one sentence (a sentence cites one passage)."""
    groups: list[list[_Scored]] = []
    for unit in units:
        if groups and groups[-1][-1].unit.marker == unit.unit.marker:
            groups[-1].append(unit)
        else:
            groups.append([unit])
    return groups


def _capped(groups: list[list[_Scored]], max_units: int) -> list[list[_Scored]]:
    """The first max_units units of the groups, groups kept whole up to the cut."""
    out: list[list[_Scored]] = []
    left = max_units
    for group in groups:
        if left <= 0:
            break
        out.append(group[:left])
        left -= len(out[-1])
    return out


def _select(ranked: list[_Scored], weights: dict[str, float], max_units: int,
            focus: set[str], opening: Sequence[_Scored]) -> Iterator[_Scored]:
    """The units after the opening ones while they add support (see the module docstring); a
    further unit from a section not yet quoted must mention one of the names or codes the question
    is about (`focus`), if it has any: a sentence of the same section may say "it"."""
    top = ranked[0]
    chosen = list(opening)
    asked = set(weights)
    total = sum(weights.values()) or 1.0
    covered = {t for c in chosen for t in c.tokens} & asked
    stated = {v for c in chosen for v in c.values}
    floor = max(EXTRA_FLOOR, RELATIVE_FLOOR * top.relevance)
    previous = top.relevance
    for candidate in ranked[1:]:
        if len(chosen) >= max_units or candidate.relevance < floor:
            return
        if candidate in chosen:
            continue
        if previous - candidate.relevance > BIG_DROP:
            return
        previous = candidate.relevance
        new = (asked & candidate.tokens) - covered
        new_value = bool(stated) and bool(candidate.values - stated)
        if sum(weights[t] for t in new) / total < MIN_GAIN and not new_value:
            continue
        if _redundant(candidate.tokens, chosen):
            continue
        sections = {(c.unit.marker, c.unit.section) for c in chosen}
        if (focus and (candidate.unit.marker, candidate.unit.section) not in sections
                and not focus & set(tokenize(candidate.unit.context))):
            continue
        chosen.append(candidate)
        covered |= new
        stated |= candidate.values
        yield candidate


def _suspicious_note(passages: Sequence[ScoredChunk], markers: Sequence[int]) -> str:
    """A note naming the quoted passages that ingest flagged as possible prompt injection."""
    flagged = sorted({m for m in markers if is_suspicious(passages[m - 1])})
    if not flagged:
        return ""
    refs = ", ".join(f"[{m}]" for m in flagged)
    signals = sorted({s for m in flagged for s in suspicious_signals(passages[m - 1]).split(",")})
    return (f"Note: {refs} comes from a source flagged at ingest as possible prompt injection "
            f"({', '.join(signals)}); treat it with care.")


def extractive_answer(
    question: str,
    passages: Sequence[ScoredChunk],
    max_sentences: int,
    max_chars: int,
    embedder: TextEmbedder | None = None,
    min_relevance: float = MIN_RELEVANCE,
) -> str:
    """The passage units that answer the question, best first, each with its marker, or IDK
    (the best unit below min_relevance, or a name the question uses that no passage has).

    A unit quoted from a passage flagged suspicious at ingest is followed by a note saying so.
    """
    if missing_names(question, passages):
        return IDK
    ranked = score_units(question, passages, embedder)
    if not ranked or ranked[0].relevance < min_relevance:
        return IDK
    parts: list[str] = []
    markers: list[int] = []
    weights = question_weights(question, passages)
    focus = _focus_terms(question) & set(weights)
    opening = _capped(_opening(ranked, question, weights, embedder is not None, min_relevance),
                      max_sentences)
    flat = [c for group in opening for c in group]
    rest = _select(ranked, weights, max_sentences, focus, flat)
    for group in [*opening, *([c] for c in rest)]:
        units = [c.unit for c in group]
        room = max_chars - len(" ".join(parts)) - (1 if parts else 0)
        cited = _joined(units)
        if len(cited) > room:
            if parts:
                continue
            unit = units[0]
            limit = room - len(f" [{unit.marker}]") - 1
            cited = _cite(clip(unit.text, limit) + "…", unit.marker)
            units = [unit]
        parts.append(cited)
        markers.extend(u.marker for u in units)
    note = _suspicious_note(passages, markers)
    return " ".join([*parts, note] if note else parts)
