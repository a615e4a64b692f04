"""clinjudge.knowledge."""
