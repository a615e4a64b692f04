"""What a note leaves out of its visit (SPEC §9 "Omissions"): the visit's facts, the note's
coverage of them, the LLM replies that give either, and per-note tallies. No LangGraph here:
the graph is :mod:`clinjudge.graphs.omission`."""
