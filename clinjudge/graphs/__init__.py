"""clinjudge.graphs."""
