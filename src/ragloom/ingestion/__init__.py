"""Loaders, validators and chunkers used by the ingestion graph."""
