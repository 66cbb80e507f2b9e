"""Compatibility: the semantic layer is `ragloom.ingestion.injection.semantic`; delete this module
once nodes/ingest.py imports it from there."""

from ragloom.ingestion.injection.semantic import document_windows, injection_detector, unsuited

__all__ = ["document_windows", "injection_detector", "unsuited"]
