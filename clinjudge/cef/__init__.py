"""The Cross-Examination Framework (SPEC §2): questions from each text, answered from the
other; coverage, conformity, consistency and conciseness. Offline and LLM backends
(:mod:`.factory`), scores (:mod:`.scores`), results (:mod:`.result`)."""
