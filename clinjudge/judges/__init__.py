"""clinjudge.judges."""
