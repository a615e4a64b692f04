"""clinjudge.metrics."""
