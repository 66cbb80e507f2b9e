"""Compatibility: normalisation is `ragloom.ingestion.injection.normalize`; delete this module
once guardrails/classifier.py imports `fold` from there."""

from ragloom.ingestion.injection.normalize import fold

__all__ = ["fold"]
