"""Claim-level fact-checking, SAFE style (SPEC §3): decomposition and labelling, queries, rating
from retrieved evidence, and the per-claim / per-answer result models. The graph that runs them is
:mod:`clinjudge.graphs.factcheck`; the search backends are :mod:`clinjudge.search`."""
