"""What the guardrails decided for one answer, in one word (for logs and metrics)."""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.state import Verdict


def guardrail_outcome(verdicts: Sequence[Verdict]) -> tuple[str, str]:
    """(category, stage) of the guardrail that acted on an answer: the input guard's category when
    it refused, `out_of_scope` from the scope check, the output guard's action (redacted, softened,
    refused), else ("ok", "")."""
    last = {v.stage: v.verdict for v in verdicts}
    if last.get("input_guard", "ok") != "ok":
        return last["input_guard"], "input_guard"
    if last.get("scope") == "out_of_scope":
        return "out_of_scope", "scope"
    if last.get("output_guard", "pass") != "pass":
        return last["output_guard"], "output_guard"
    return "ok", ""
