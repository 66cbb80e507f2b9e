"""The input guard's heuristic classifier: ok, out_of_scope, pii_request, jailbreak or dangerous.

Zero model calls and deterministic. A question is folded (`ingestion.injection.normalize.fold`: case,
accents, look-alike letters), leetspeak is read back into letters (`1gn0re` → `ignore`), and the
people it names are masked (`personx`). Then, in order of precedence:

- jailbreak: the ingest injection scan (`scan_injection`: instruction overrides, role play, prompt
  leaks, chat-template markers, letter-spaced and hidden words) reaches its `suspicious` level with
  a jailbreak signal, or a question-specific cue (`rules.JAILBREAK`: system-prompt extraction,
  "your rules no longer apply", "answer without restrictions", "pretend you have no filters",
  mode switches, fake system turns); cues inside quotes are talk about an attack, not one;
- dangerous: a request to make or get a harmful object (malware, weapons, chemical agents, drugs,
  phishing kits) that is not framed as defence, getting into someone else's account or network,
  or hurting a person;
- pii_request: an attribute of personal data (phone, address, health, salary, ...) asked about a
  person other than the asker, or in bulk; questions about one's own data, an organisation's
  contact desk or personal data in general (policies, formats) are ok;
- out_of_scope: creative writing, jokes, live data (weather, prices, scores, news), opinions,
  predictions, personal advice, homework;
- ok otherwise.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

import regex

from ragloom.guardrails import rules

Category = Literal["ok", "out_of_scope", "pii_request", "jailbreak", "dangerous"]
CATEGORIES: tuple[Category, ...] = ("ok", "out_of_scope", "pii_request", "jailbreak", "dangerous")
REFUSED: frozenset[str] = frozenset(CATEGORIES[1:])
"""Categories the input guard refuses."""

JAILBREAK_SIGNALS = frozenset({
    "instruction_override", "role_play", "prompt_leak", "system_prompt_marker", "authority_claim",
    "encoded_instruction", "exfiltration", "hidden_text", "encoded_payload",
})
"""Injection-scan signals that make a question a jailbreak (not answer steering alone)."""
SCAN_LEVEL = 0.45
"""The scan score (its `suspicious` level) from which a question is a jailbreak."""
SCAN_BUDGET_S = 0.1
"""Time the injection scan may take over one question (ordinary ones take about a millisecond);
a question that exhausts it is refused as a jailbreak."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'",
                              "\u2010": "-", "\u2011": "-", "\u00a0": " "})
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i"})
_MIXED_TOKEN = regex.compile(r"\b(?=[\w@$!]*[a-z])(?=[\w@$!]*[0-9@$!])[\w@$!]{3,}\b")
_CAPITALISED = regex.compile(r"(?<![\w'-])\p{Lu}[\p{Ll}'-]*\p{Ll}(?:-\p{Lu}\p{Ll}+)?(?:'s)?")
_SENTENCE_START = regex.compile(r"(?:^|[.!?:;]\s+|\n\s*|[\"«(]\s*)$")
_QUOTED = regex.compile(r"\"[^\"\n]{3,200}\"|'[^'\n]{6,200}'(?!\w)|«[^»\n]{3,200}»|"
                        r"\u201c[^\u201d\n]{3,200}\u201d")
_TITLE = regex.compile(r"\b(?:mr|mrs|ms|miss|dr|prof|sir|monsieur|madame|mme|mlle|m)\.?\s*$",
                       regex.IGNORECASE)
_PERSON_CUE = regex.compile(
    rf"\b(?:of|for|about|de|d'|pour|sur|chez|{rules.PERSON_NOUN})\s*$", regex.IGNORECASE)
_NOT_NAMES = frozenset(
    "i what who whom whose which where when why how is are was were do does did can could should "
    "would will give tell find list show please write create make explain describe hi hello the "
    "a an my our your in on at for and or but if then this that these those quel quelle quels "
    "quelles qui que quoi ou où quand comment pourquoi combien est donne dis trouve liste "
    "montre écris ecris explique le la les un une mon ma mes ton ta tes je tu il elle nous vous "
    "ils elles de du des et ou si monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december "
    "lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril mai juin "
    "juillet août septembre octobre novembre décembre english french anglais français system "
    "systeme système admin developer ignore forget oublie ignorer pretend imagine act let "
    "stop new from you".split()
)
_ORG_SUFFIXES = frozenset(
    "inc ltd llc as sa sas sarl gmbh ag corp corporation company co group instruments bank "
    "university hospital school airlines foundation institute labs technologies systems "
    "services solutions partners holdings industries international ministry council agency "
    "club team".split()
)


@dataclass(frozen=True)
class GuardVerdict:
    """The classifier's decision: the category, the rules that decided it and a short reason."""

    category: Category
    rules: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Prepared:
    """A question in the forms the rules read: folded, people masked, leetspeak read back."""

    folded: str
    masked: str
    deleeted: str
    quoted: tuple[tuple[int, int], ...]


def _fold(text: str) -> str:
    from ragloom.ingestion.injection.normalize import fold

    return fold(text.translate(_APOSTROPHES)).translate(_APOSTROPHES)


def people(question: str) -> list[str]:
    """The names of people a question mentions (capitalised words in a name position)."""
    text = question.translate(_APOSTROPHES)
    tokens = list(_CAPITALISED.finditer(text))
    names: list[str] = []
    i = 0
    while i < len(tokens):
        run = [tokens[i]]
        while i + 1 < len(tokens) and text[run[-1].end():tokens[i + 1].start()].strip() in (
                "", "de", "van", "von", "du", "le", "da", "di", "del", "der") \
                and not run[-1].group().endswith("'s"):
            i += 1
            run.append(tokens[i])
        i += 1
        words = [t.group().removesuffix("'s") for t in run]
        while words and words[0].lower() in _NOT_NAMES:
            run, words = run[1:], words[1:]
        if not words or words[-1].lower() in _ORG_SUFFIXES:
            continue
        before = text[:run[0].start()]
        initial = bool(_SENTENCE_START.search(before))
        possessive = run[-1].group().endswith("'s")
        if len(words) >= 2 or (not initial and (possessive or _TITLE.search(before)
                                                or _PERSON_CUE.search(before))):
            names.append(text[run[0].start():run[-1].end()].removesuffix("'s"))
    return names


def prepare(question: str) -> Prepared:
    """Fold the question, mask the people it names and read leetspeak back into letters."""
    folded = _fold(question)
    masked = folded
    for name in sorted(people(question), key=len, reverse=True):
        masked = masked.replace(_fold(name), "personx")
    deleeted = _MIXED_TOKEN.sub(lambda m: m.group().translate(_LEET), folded)
    quoted = tuple((m.start(), m.end()) for m in _QUOTED.finditer(folded))
    return Prepared(folded, masked, deleeted, quoted)


def _unquoted(pattern: re.Pattern[str], text: str,
              quoted: tuple[tuple[int, int], ...]) -> re.Match[str] | None:
    """The first match of pattern not inside a quoted span (a cited attack is no attack)."""
    for match in pattern.finditer(text):
        if not any(start <= match.start() and match.end() <= end for start, end in quoted):
            return match
    return None


@functools.lru_cache(maxsize=1024)
def _scan(text: str) -> tuple[float, frozenset[str]]:
    """Score and signals of the ingest injection scan over the question."""
    from ragloom.ingestion.injection.screen import scan_injection
    from ragloom.state import SourceDocument

    result = scan_injection(SourceDocument(doc_id="question", source_id="question", text=text),
                            budget_s=SCAN_BUDGET_S)
    return result.score, frozenset(result.signals)


def _evidence(match: re.Match[str] | regex.Match[str]) -> str:
    return " ".join(match.group().split())[:60]


def jailbreak(question: str, prepared: Prepared) -> GuardVerdict | None:
    """A jailbreak verdict, or None."""
    for text in dict.fromkeys([question, prepared.deleeted]):
        score, signals = _scan(text)
        if "scan_timeout" in signals:
            return GuardVerdict("jailbreak", ("scan:scan_timeout",),
                                f"the injection scan ran out of its {SCAN_BUDGET_S:g} s: text "
                                "built to be slow to read (letter-spaced or split words)")
        found = sorted(signals & JAILBREAK_SIGNALS)
        if score >= SCAN_LEVEL and found:
            return GuardVerdict("jailbreak", tuple(f"scan:{s}" for s in found),
                                f"injection scan {score:.2f}: {', '.join(found)}")
    for text in dict.fromkeys([prepared.folded, prepared.deleeted]):
        quoted = prepared.quoted if text is prepared.folded else ()
        for label, pattern in rules.JAILBREAK:
            match = _unquoted(pattern, text, quoted)
            if match:
                return GuardVerdict("jailbreak", (label,), f"{label}: {_evidence(match)!r}")
        match = _unquoted(rules.DROPPED_LIMITS, text, quoted)
        if match and rules.TO_ASSISTANT.search(text):
            return GuardVerdict("jailbreak", ("override",), f"override: {_evidence(match)!r}")
    return None


def dangerous(prepared: Prepared) -> GuardVerdict | None:
    """A dangerous-request verdict, or None."""
    text = prepared.masked
    for label, pattern in (("intrusion", rules.INTRUSION), ("violence", rules.VIOLENCE)):
        match = pattern.search(text)
        if match:
            return GuardVerdict("dangerous", (label,), f"{label}: {_evidence(match)!r}")
    if rules.STEALTH.search(text) and rules.VIOLENCE_CONTEXT.search(text):
        return GuardVerdict("dangerous", ("violence",), "harm to a person, unseen")
    text = prepared.folded  # objects, not people: "cheval de Troie" is no name
    harmful = rules.HARMFUL_OBJECT.search(text)
    if harmful is None:
        return None
    request = rules.HOW_TO.search(text)
    if request is None or request.start() > harmful.end():
        return None
    between = text[request.end():harmful.start()]
    if rules.PROTECTIVE.search(text) and (len(between.split()) > 3
                                           or rules.PROTECTIVE.search(text[:harmful.start()])):
        return None
    return GuardVerdict("dangerous", ("harmful_request",),
                        f"asks for {harmful.group()!r} ({_evidence(request)!r})")


def pii_request(prepared: Prepared) -> GuardVerdict | None:
    """A request for someone's personal data, or None."""
    text = prepared.masked
    benign = rules.BENIGN_PII.search(text)
    strong = rules.PII_STRONG.search(text)
    attribute = rules.PII_ATTRIBUTE.search(text)
    if strong is None and attribute is not None:
        strong = rules.BULK_QUESTION.search(text)
    if strong and not benign:
        return GuardVerdict("pii_request", ("pii_form",), f"asks {_evidence(strong)!r}")
    target = rules.PERSON_TARGET.search(text)
    if attribute is None or target is None or benign or not rules.VALUE_SEEKING.search(text):
        return None
    return GuardVerdict("pii_request", ("pii_attribute",),
                        f"asks for {attribute.group()!r} of {target.group()!r}")


def out_of_scope(prepared: Prepared) -> GuardVerdict | None:
    """An out-of-scope task verdict, or None."""
    for label, pattern in rules.OUT_OF_SCOPE:
        match = pattern.search(prepared.masked)
        if match:
            return GuardVerdict("out_of_scope", (label,), f"{label}: {_evidence(match)!r}")
    return None


def heuristic_verdict(question: str) -> GuardVerdict:
    """Classify a question without a model call (precedence: jailbreak, dangerous, pii_request,
    out_of_scope, then ok)."""
    prepared = prepare(question)
    return (jailbreak(question, prepared) or dangerous(prepared) or pii_request(prepared)
            or out_of_scope(prepared) or GuardVerdict("ok", (), "no guardrail rule matched"))
