"""Graph builders; compile only at the edges (studio, API, tests)."""
