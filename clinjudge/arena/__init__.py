"""The arena's domain logic (SPEC §6, issue 25): what the other judges say about a text
(:mod:`.evidence`), and the per-criterion preference between two texts of the same item that
the offline pairwise judge reads from it (:mod:`.preference`). No LangGraph, no model: plain
values in, plain values out."""
