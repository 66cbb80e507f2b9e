"""Optional dependencies: import one, or fail saying which `ragloom[extra]` to install."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from ragloom.errors import ConfigError

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "llm": ("langchain_openai", "langchain"),
    "eval": ("pytrec_eval", "matplotlib"),
    "api": ("fastapi", "uvicorn", "sse_starlette", "strawberry", "redis", "limits", "cachetools",
            "prometheus_client", "opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
}
"""Each extra of pyproject.toml → the modules ragloom imports from what it installs."""

EXTRAS = {module.split(".")[0]: extra for extra, modules in EXTRA_MODULES.items()
          for module in modules}
"""Top-level module → the extra of pyproject.toml that installs it."""


def _hint(extra: str) -> str:
    """How to install an extra."""
    return f"install ragloom[{extra}]: pip install 'ragloom[{extra}]'"


def _installed(module: str) -> bool:
    """Whether module can be imported (found without importing it; parents are imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(extra: str, feature: str) -> None:
    """ConfigError naming the extra and what is missing unless all of its modules are installed."""
    missing = [m for m in EXTRA_MODULES[extra] if not _installed(m)]
    if missing:
        raise ConfigError(f"{feature} needs the optional package(s) {', '.join(missing)}",
                          hint=_hint(extra))


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
                          hint=_hint(extra)) from exc
