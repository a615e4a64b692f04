"""Agreement of judges with sentence labels (SPEC §9), read from compare run directories and
label files: :mod:`.labels` (the shared claim-labels format and its units), :mod:`.runs` (a run's
SOAP judges and the mapping of its notes to labelled notes), :mod:`.scores` (the report). The
formulas live in :mod:`clinjudge.metrics` (``unit_labels``, ``unit_agreement``,
``disagreements``, ``reviewer_agreement``)."""
