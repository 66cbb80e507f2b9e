"""Document and BM25 indexes, the ingestion manifest and the quarantine."""
