"""Language of a text, offline: py3langid's bundled model, restricted to the candidate languages.

One place for language identification, used for documents at ingest (chunk metadata `lang`) and
for questions by the input guard (the refusal language and the language-mismatch down-rank).
Deterministic; the model (4 MB, shipped in the wheel) loads once per process on first use.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

from ragloom.errors import ConfigError

DEFAULT_LANGUAGES = ("en", "fr", "de", "es", "it", "nl", "pt")
"""ISO 639-1 codes detection chooses among by default."""
SAMPLE_CHARS = 4000
"""Characters of a long text that are read (its start): enough for a confident decision."""
MIN_LETTERS = 3
MIN_CONFIDENCE = 0.5
"""Below this normalised probability the text is too short or mixed to tell: None."""

_lock = threading.Lock()


@functools.lru_cache(maxsize=8)
def _identifier(languages: tuple[str, ...]) -> Any:
    """A py3langid identifier restricted to `languages` (its own copy: the module's is global)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    unknown = sorted(set(languages) - set(identifier.labels))
    if unknown:
        raise ConfigError(f"language detection does not know {', '.join(unknown)}",
                          where="settings.ingest.languages",
                          hint=f"known codes: {', '.join(sorted(identifier.labels))}")
    identifier.set_languages(list(languages))
    return identifier


def primary_code(tag: str | None) -> str | None:
    """The primary language subtag of a BCP 47 tag in lower case ('en-US' → 'en'), or None."""
    if not tag or not isinstance(tag, str):
        return None
    code = tag.strip().replace("_", "-").split("-")[0].lower()
    return code if code.isalpha() and 2 <= len(code) <= 3 else None


def detect_language(text: str, languages: Sequence[str] = DEFAULT_LANGUAGES) -> str | None:
    """The ISO 639-1 code of the text's language among `languages`, or None when unsure."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < MIN_LETTERS:
        return None
    codes = tuple(dict.fromkeys(code.lower() for code in languages))
    with _lock:
        identifier = _identifier(codes)
    code, confidence = identifier.classify(sample)
    return str(code) if confidence >= MIN_CONFIDENCE else None
