"""The inflated copy of py3langid's model in the cache gives the same decisions as the bundled one."""

from __future__ import annotations

from pathlib import Path

import ragloom.language as language

SAMPLES = ["How long is the warranty?", "Combien de temps dure la garantie ?",
           "Wie lange gilt die Garantie?", "¿Cuánto dura la garantía?", "ok"]


def test_the_cached_model_decides_like_the_bundled_one(tmp_path: Path) -> None:
    bundled = [language.detect_language(text) for text in SAMPLES]
    cached = [language.detect_language(text, cache_dir=tmp_path) for text in SAMPLES]
    assert cached == bundled and bundled[:4] == ["en", "fr", "de", "es"]
    assert len(list((tmp_path / "langid").glob("model-*.npz"))) == 1  # inflated once
    assert not list((tmp_path / "langid").glob("*.tmp"))


def test_an_unwritable_cache_falls_back_to_the_bundled_model(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert language.detect_language(SAMPLES[1], cache_dir=blocked) == "fr"


def test_a_corrupt_cached_copy_is_read_past(tmp_path: Path) -> None:
    language.detect_language("warm", cache_dir=tmp_path)  # writes the inflated copy
    for copy in (tmp_path / "langid").glob("model-*.npz"):
        copy.write_bytes(b"not an npz")
    language._identifier.cache_clear()
    assert language.detect_language(SAMPLES[2], cache_dir=tmp_path) == "de"
