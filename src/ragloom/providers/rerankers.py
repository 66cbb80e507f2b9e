"""Rerankers by name: `none`, `cross-encoder`, `llm`, plus host-registered factories."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragloom.errors import ConfigError, UnknownNameError
from ragloom.providers.chat import parse_json_list_reply
from ragloom.providers.quoting import fenced, is_suspicious
from ragloom.settings import RerankSettings
from ragloom.state import ScoredChunk

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

LLM_WINDOW = 20
LLM_PASSAGE_CHARS = 600
LLM_RERANK_SYSTEM = (
    "You rank passages by how well they answer the question. Reply with the passage numbers from "
    "most to least relevant, separated by '>', for example: 3 > 1 > 2. Output nothing else."
)

_INTEGER = re.compile(r"\d+")


@runtime_checkable
class Reranker(Protocol):
    """Second-stage ranker: returns at most top_n chunks, best first, origin `rerank:<name>`."""

    name: str

    def rerank(self, question: str, chunks: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        """Reorder chunks for the question and keep the best top_n."""


RerankerFactory = Callable[[RerankSettings, "BaseChatModel | None"], Reranker]


def rescore(chunks: Sequence[ScoredChunk], scores: Sequence[float], name: str) -> list[ScoredChunk]:
    """Attach new scores with origin `rerank:<name>` and sort best first (stable on ties)."""
    rescored = [
        ScoredChunk(chunk=s.chunk, score=float(score), score_origin=f"rerank:{name}")
        for s, score in zip(chunks, scores, strict=True)
    ]
    return sorted(rescored, key=lambda s: -s.score)


class NoneReranker:
    """No second stage: keep the fused order and scores, truncated to top_n."""

    name = "none"

    def rerank(self, question: str, chunks: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        """Return the first top_n chunks unchanged."""
        return list(chunks[:top_n])


_load_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _load_cross_encoder(model: str) -> Any:
    """Load a sentence-transformers CrossEncoder once per process from a local path."""
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(model, num_labels=1, device="cpu", local_files_only=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot load cross-encoder {model!r}: {exc}",
            where="settings.rerank.model",
            hint="give a local model directory; nothing is downloaded at run time",
        ) from exc


class CrossEncoderReranker:
    """Score (question, passage) pairs with a CrossEncoder loaded lazily on first use."""

    name = "cross-encoder"

    def __init__(self, model: str) -> None:
        self.model = model

    def rerank(self, question: str, chunks: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        """Score every chunk against the question and keep the best top_n."""
        if not chunks:
            return []
        with _load_lock:
            encoder = _load_cross_encoder(self.model)
        scores = encoder.predict(
            [(question, s.chunk.text) for s in chunks],
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return rescore(chunks, [float(x) for x in scores], self.name)[:top_n]


def parse_ranking(text: str, n: int) -> list[int]:
    """Parse a 1-based ranking of n passages ('3 > 1 > 2', JSON, prose); invalid ids dropped.

    The reply's JSON list is read when it ranks at least as many passages as the integers of the
    whole reply do (so `[3] > [1] > [2]` is not read as its first list alone).
    """
    listed = _ranking(parse_json_list_reply(text) or [], n)
    counted = _ranking(_INTEGER.findall(text), n)
    return listed if len(listed) >= len(counted) else counted


def _ranking(items: Sequence[object], n: int) -> list[int]:
    """The valid passage numbers of items (each item's first integer), first mention kept."""
    ranking: list[int] = []
    for item in items:
        digits = _INTEGER.search(str(item))
        value = int(digits.group(0)) if digits else 0
        if 1 <= value <= n and value not in ranking:
            ranking.append(value)
    return ranking


class LlmReranker:
    """One listwise chat call over the first LLM_WINDOW candidates."""

    name = "llm"

    def __init__(self, chat: BaseChatModel, window: int = LLM_WINDOW) -> None:
        self.chat = chat
        self.window = window

    def _prompt(self, question: str, chunks: Sequence[ScoredChunk]) -> str:
        """Question plus numbered, shortened passages; flagged ones fenced as quoted data."""
        lines = [f"Question: {question}", "", "Passages:"]
        for i, scored in enumerate(chunks, start=1):
            text = " ".join(scored.chunk.text.split())[:LLM_PASSAGE_CHARS]
            if is_suspicious(scored.chunk.metadata):
                text = fenced(text, scored.chunk.metadata)
            lines.append(f"[{i}] {text}")
        return "\n".join(lines)

    def rerank_traced(
        self, question: str, chunks: list[ScoredChunk], top_n: int
    ) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """Rerank and report how the model output was used."""
        from ragloom.providers.chat import complete

        head, tail = chunks[: self.window], chunks[self.window :]
        if not head:
            return [], {"window": 0}
        try:
            reply = complete(self.chat, LLM_RERANK_SYSTEM, self._prompt(question, head),
                         stage="rerank")
        except Exception as exc:  # noqa: BLE001 - an optional enhancer degrades, traced
            reason = f"original order: chat model failed: {type(exc).__name__}: {exc}"
            return list(chunks[:top_n]), {"window": len(head), "fallback": reason}
        ranking = parse_ranking(reply, len(head))
        if not ranking:
            reason = "original order: unparseable ranking"
            return list(chunks[:top_n]), {"window": len(head), "fallback": reason}
        order = ranking + [i for i in range(1, len(head) + 1) if i not in ranking]
        scores = [(len(order) - pos) / len(order) for pos in range(len(order))]
        reordered = [head[i - 1] for i in order]
        ranked = rescore(reordered, scores, self.name) + list(tail)
        detail = {"window": len(head), "parsed": len(ranking), "appended": len(head) - len(ranking)}
        return ranked[:top_n], detail

    def rerank(self, question: str, chunks: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        """Reorder the window by the model's listwise ranking and keep the best top_n."""
        return self.rerank_traced(question, chunks, top_n)[0]


def _none(settings: RerankSettings, chat: BaseChatModel | None) -> Reranker:
    """Factory of the pass-through reranker."""
    return NoneReranker()


def _cross_encoder(settings: RerankSettings, chat: BaseChatModel | None) -> Reranker:
    """Factory of the cross-encoder reranker; the model path is required."""
    if not settings.model:
        raise ConfigError(
            "reranker 'cross-encoder' needs a model",
            where="settings.rerank.model",
            hint="set rerank.model to a local cross-encoder directory",
        )
    return CrossEncoderReranker(settings.model)


def _llm(settings: RerankSettings, chat: BaseChatModel | None) -> Reranker:
    """Factory of the listwise LLM reranker; a chat model is required."""
    if chat is None:
        raise ConfigError(
            "reranker 'llm' needs a chat model",
            where="settings.rerank.name",
            hint="configure chat.provider, or choose reranker 'none' or 'cross-encoder'",
        )
    return LlmReranker(chat)


_REGISTRY: dict[str, RerankerFactory] = {
    "none": _none,
    "cross-encoder": _cross_encoder,
    "llm": _llm,
}


def register_reranker(name: str, factory: RerankerFactory) -> None:
    """Register a host reranker factory `(RerankSettings, chat | None) -> Reranker` under name."""
    _REGISTRY[name] = factory


def reranker_names() -> list[str]:
    """Names of the registered rerankers."""
    return sorted(_REGISTRY)


def get_reranker(settings: RerankSettings, chat: BaseChatModel | None = None) -> Reranker:
    """Build the reranker named in settings, or fail listing the known names."""
    factory = _REGISTRY.get(settings.name)
    if factory is None:
        raise UnknownNameError("reranker", settings.name, reranker_names())
    return factory(settings, chat)
