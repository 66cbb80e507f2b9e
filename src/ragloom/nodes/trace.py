"""Stage timing and trace records: the one place a node builds its TraceStep."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from ragloom.state import TraceStep

logger = logging.getLogger("ragloom")

_logged: set[str] = set()
_logged_lock = threading.Lock()


class StageClock:
    """Time one stage and collect its trace detail; usable as a context manager."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.detail: dict[str, Any] = {}
        self._start = time.perf_counter()
        self._end: float | None = None

    def __enter__(self) -> StageClock:
        """Start the clock."""
        self._start = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the clock; exceptions propagate."""
        self._end = time.perf_counter()

    def note(self, **detail: Any) -> None:
        """Add entries to the trace detail."""
        self.detail.update(detail)

    def elapsed_ms(self) -> float:
        """Milliseconds since the stage started (until it ended, when it has)."""
        end = self._end if self._end is not None else time.perf_counter()
        return round((end - self._start) * 1000.0, 3)

    def trace(self) -> list[TraceStep]:
        """Return the one-element trace update for this stage."""
        return [
            TraceStep(stage=self.stage, duration_ms=self.elapsed_ms(), detail=dict(self.detail))
        ]

    def skip(self, reason: str, **detail: Any) -> list[TraceStep]:
        """Return the trace update of a stage skipped on purpose."""
        self.note(skipped=True, reason=reason, **detail)
        return self.trace()


def log_once(key: str, message: str) -> None:
    """Log a documented degradation the first time it happens in this process."""
    with _logged_lock:
        if key in _logged:
            return
        _logged.add(key)
    logger.warning(message)


def skipped_step(stage: str, reason: str) -> TraceStep:
    """The trace record of a stage a builder left out of the graph: zero time and the reason."""
    return TraceStep(stage=stage, duration_ms=0.0, detail={"skipped": True, "reason": reason})


def in_stage_order(trace: Sequence[TraceStep], skipped: Sequence[TraceStep],
                   order: Sequence[str]) -> list[TraceStep]:
    """The trace with each skipped step placed before the first step of a later stage in `order`
    (the graph's stage table; steps of stages it does not name never count as later)."""
    rank = {stage: i for i, stage in enumerate(order)}
    merged = list(trace)
    for step in sorted(skipped, key=lambda s: rank.get(s.stage, len(rank))):
        position = rank.get(step.stage, len(rank))
        at = next((i for i, s in enumerate(merged) if rank.get(s.stage, -1) > position),
                  len(merged))
        merged.insert(at, step)
    return merged
