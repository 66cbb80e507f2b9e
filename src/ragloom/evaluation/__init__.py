"""Datasets, metrics and the evaluation harness."""
