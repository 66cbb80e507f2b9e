"""Named points where the crash tests kill the process, inside multi-step writes.

`_RAGLOOM_CRASHPOINT=NAME[:N]` makes the N-th (default first) pass through `crashpoint(NAME)` send
SIGKILL to this process. Unset (always, outside tests) a pass costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

_ENV = "_RAGLOOM_CRASHPOINT"
_passes: dict[str, int] = {}


def crashpoint(name: str) -> None:
    """Die here with SIGKILL when the environment names this point (fault injection for tests)."""
    wanted = os.environ.get(_ENV)
    if not wanted:
        return
    target, _, nth = wanted.partition(":")
    if target != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
