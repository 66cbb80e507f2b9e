"""Optional dependencies: import one, or fail saying which `ragloom[extra]` to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from ragloom.errors import ConfigError

EXTRAS = {
    "langchain_openai": "llm",
    "pytrec_eval": "eval",
    "matplotlib": "eval",
}
"""Top-level module → the extra of pyproject.toml that installs it."""


def require(module: str, feature: str) -> ModuleType:
    """Import module (or a submodule of it); ConfigError naming the extra when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # the package is there but one of its own imports failed: a real error
        extra = EXTRAS[top]
        raise ConfigError(f"{feature} needs the optional package {top!r}",
                          hint=f"install ragloom[{extra}]: pip install 'ragloom[{extra}]'") from exc
