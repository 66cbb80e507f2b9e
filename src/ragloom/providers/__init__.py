"""Embedding, chat and reranker providers chosen by name."""
