"""Environment variables set only around the library calls that read them, never process-wide."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

HF_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
"""Hugging Face libraries offline and quiet: no downloads, no progress bars, no tokenizer thread
pool that would warn when the process forks later. Read when the libraries are imported or used."""

_lock = threading.RLock()


@contextlib.contextmanager
def env_defaults(values: dict[str, str]) -> Iterator[None]:
    """Set the variables the environment lacks for the duration of the block, then remove them.

    Variables the user set keep their values. Nested and concurrent uses are serialised.
    """
    with _lock:
        added = [name for name in values if name not in os.environ]
        for name in added:
            os.environ[name] = values[name]
        try:
            yield
        finally:
            for name in added:
                os.environ.pop(name, None)
