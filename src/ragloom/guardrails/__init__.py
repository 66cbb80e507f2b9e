"""Guardrails shared by every surface: the question classifier, PII detection and refusal texts.

Library code without graph dependencies (the nodes in `ragloom.nodes.input_guard`, `scope`,
`output_guard` and `refuse` use it; the HTTP service may use `pii.redact_pii` for its logs).
"""
