"""Language of a text, offline: py3langid's bundled model, restricted to the candidate languages.

One place for language identification, used for documents at ingest (chunk metadata `lang`) and
for questions by the input guard (the refusal language and the language-mismatch down-rank).
Deterministic; the model (4 MB, shipped in the wheel) loads once per process on first use. The
wheel's copy is LZMA-compressed (0.4 s to inflate, paid by every CLI query); the inflated arrays
are cached once under the cache directory (`CACHE_DIR/langid/`), so later processes load them in
~0.05 s.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragloom.errors import ConfigError
from ragloom.settings import DEFAULT_LANGUAGES

SAMPLE_CHARS = 4000
"""Characters of a long text that are read (its start): enough for a confident decision."""
MIN_LETTERS = 3
MIN_CONFIDENCE = 0.5
"""Below this normalised probability the text is too short or mixed to tell: None."""

_lock = threading.Lock()
logger = logging.getLogger(__name__)


def _inflated_model(cache_dir: Path) -> Path | None:
    """The bundled model as a plain .npz in the cache (inflated once, written then renamed);
    None when the cache cannot be written."""
    import lzma
    import shutil

    from py3langid.langid import MODEL_DIR, MODEL_FILE

    bundled = Path(MODEL_DIR) / MODEL_FILE
    stat = bundled.stat()
    target = cache_dir / "langid" / f"model-{stat.st_size}-{int(stat.st_mtime)}.npz"
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as tmp:
            try:
                with lzma.open(bundled) as source:
                    shutil.copyfileobj(source, tmp, length=1 << 20)
            except (OSError, lzma.LZMAError) as exc:
                os.unlink(tmp.name)
                logger.info("cannot inflate the language model into %s (%s): reading the bundled "
                            "copy each process", target.parent, exc)
                return None
        os.replace(tmp.name, target)
    except OSError as exc:
        logger.info("cannot write the language model cache %s (%s): reading the bundled copy each "
                    "process", target.parent, exc)
        return None
    return target


def _load_identifier(cache_dir: Path | None) -> Any:
    """py3langid's identifier, from the inflated cache copy when there is one."""
    import numpy as np
    from py3langid.langid import MODEL_FILE, LanguageIdentifier
    from py3langid.modelio import _to_array

    inflated = _inflated_model(cache_dir) if cache_dir is not None else None
    if inflated is not None:
        try:
            with np.load(inflated, allow_pickle=False) as data:  # py3langid.modelio's layout
                return LanguageIdentifier(
                    np.asarray(data["ptc"]), np.asarray(data["pc"]), data["classes"].tolist(),
                    _to_array(data["nextmove"]), data["out_feat"].tolist(), norm_probs=True,
                    tk_row=_to_array(data["nextmove_row"]))
        except (OSError, KeyError, ValueError, TypeError) as exc:  # a corrupt or foreign copy
            logger.info("language model cache %s unusable (%s): reading the bundled model",
                        inflated, exc)
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@functools.lru_cache(maxsize=8)
def _identifier(languages: tuple[str, ...], cache_dir: Path | None) -> Any:
    """A py3langid identifier restricted to `languages` (its own copy: the module's is global)."""
    identifier = _load_identifier(cache_dir)
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


def detect_language(text: str, languages: Sequence[str] = DEFAULT_LANGUAGES,
                    cache_dir: Path | None = None) -> str | None:
    """The ISO 639-1 code of the text's language among `languages`, or None when unsure
    (`cache_dir`: where the inflated model is cached; None reads the bundled copy)."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < MIN_LETTERS:
        return None
    codes = tuple(dict.fromkeys(code.lower() for code in languages))
    with _lock:
        identifier = _identifier(codes, cache_dir)
    code, confidence = identifier.classify(sample)
    return str(code) if confidence >= MIN_CONFIDENCE else None
