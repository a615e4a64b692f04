"""Agreement of judges with sentence labels (SPEC §9), read from compare run directories and
label files: :mod:`.labels` (the shared claim-labels format and its units), :mod:`.runs` (a run's
SOAP judges and the mapping of its notes to labelled notes), :mod:`.scores` (the report);
:mod:`.units` cuts a note into units and :mod:`.labelling`, :mod:`.labelling_store` and
:mod:`.labelling_server` are ``clinjudge label`` (labelling a run's notes in the browser). The
formulas live in :mod:`clinjudge.metrics` (``unit_labels``, ``unit_agreement``,
``disagreements``, ``reviewer_agreement``)."""
