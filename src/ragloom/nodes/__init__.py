"""Node functions shared by every graph: (state, runtime) -> update."""
