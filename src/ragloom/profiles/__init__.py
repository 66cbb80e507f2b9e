"""Quality profiles: named presets that expand to complete RagSettings."""
