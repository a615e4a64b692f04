"""What a transcript sentence says around a concept mention, for the omission judge's facts
(:mod:`clinjudge.omissions.visit_facts`): the mention's own statement in a run-on ASR sentence
(:func:`clause_span`), the words next to it (:func:`words_near`), and the cues that make a mention
no fact about the patient (teaching, a pain scale's anchors, foods, another person) or make it
critical (the clinician examining, an abnormal sign).
"""

from __future__ import annotations

import re

from clinjudge.text.clauses import clause_around

TEACHING = re.compile(
    r"\b(?:side effects?|possible causes?|other causes?|can cause|could cause|may cause|"
    r"causes? (?:of|are|is|include)|risks? (?:of|are|is|include)|such as|things like|"
    r"for example|people with|patients with|they can|they have|screen(?:ing)? for|rule out|"
    r"either|risks?|avoid|prevent\w*|make sure|lead to|do n't want|don't want|"
    r"watch (?:out )?for|look (?:out )?for|keep an eye out for|warning signs?|could happen|"
    r"can happen|(?:can|could) do (?:that|this)|(?:does|do|did) ?n[o'’]?t want|not want to)\b",
    re.I,
)
#: Foods and drinks some drug vocabularies list as drugs ("wheat", "water"): a fact only as
#: what an allergy is to.
FOODS = frozenset(
    {"wheat", "water", "milk", "bread", "corn", "soy", "rice", "egg", "eggs", "peanut"}
    | {"peanuts", "gluten", "juice", "honey", "oat", "oats", "coffee", "tea", "soda", "sodas"}
)
#: Antiseptics and contrast agents a procedure uses ("i had the iodine for my eyes" before a
#: cataract operation): materials of the procedure, not the patient's medications — a fact
#: only as what an allergy is to ("allergic to iodine").
PROCEDURE_MATERIALS = frozenset(
    {"iodine", "povidone-iodine", "betadine", "chlorhexidine", "contrast", "contrast dye"}
    | {"gadolinium", "barium", "dye"}
)
#: Vital signs named without a value or a cue: the value facts carry vitals.
VITAL_NAMES = frozenset(
    {"blood pressure", "bp", "heart rate", "pulse", "temperature", "weight", "oxygen"}
    | {"oxygen saturation", "respiratory rate", "vitals", "vital signs"}
)
#: Another person next to a mention: the facts said of them are not the patient's.
SOMEONE_ELSE = re.compile(
    r"\b(?:my|your|her|his|their|a)\s+(?:\w+\s+)?(cousin|friend|neighbou?r|co-?worker|roommate|"
    r"sister|brother|mother|father|mom|dad|husband|wife|son|daughter|aunt|uncle|"
    r"grand(?:mother|father|ma|pa))s?\b",
    re.I,
)
#: People whose conditions are no family history of the patient's.
NOT_KIN = frozenset(
    {"cousin", "friend", "neighbor", "neighbour", "coworker", "co-worker", "roommate"}
)
#: "zero being no pain and ten the worst pain": the anchors of a pain scale.
PAIN_SCALE = re.compile(
    r"\b(?:zero|0)\W+(?:being\W+|is\W+|means\W+)?no pain\b|\bworst pain\b", re.I
)
#: The allergy a person has (hay fever), not an allergy to something: "claritin for allergies",
#: "i tend to get my allergies", "seasonal allergies".
ALLERGY_CONDITION = re.compile(
    r"\b(?:for (?:(?:my|your|her|his|the) )?|(?:my|your|her|his) |seasonal |spring\w* |get )"
    r"(?:seasonal )?$",
    re.I,
)
#: Where a spoken statement turns to another in an unpunctuated transcript ("no diarrhea okay
#: and then how about your blood pressure").
_TURN = re.compile(r"\b(?:okay|ok|alright|all right)\b(?:\s*,)?(?:\s+(?:and|so|now|then))*", re.I)
#: The clinician examining: what they see, feel or hear, or a finding "on exam".
EXAMINING = re.compile(
    r"\b(?:exam\w*|palpat\w*|i (?:do )?(?:see|feel|hear|notice|appreciate)|there (?:is|'s|are)|"
    r"you (?:do )?have (?:some|a|an|mild|moderate|significant)|to palpation|"
    r"on your (?:right|left))\b",
    re.I,
)


def clause_span(sentence: str, start: int, end: int) -> tuple[int, int]:
    """The span of the statement of a transcript sentence that holds ``sentence[start:end]``:
    its clause (:func:`~clinjudge.text.clauses.clause_around`), cut again where the speaker
    turns to something else ("okay", "alright")."""
    left, right = clause_around(sentence, start, end)
    for m in _TURN.finditer(sentence, left, right):
        if m.end() <= start:
            left = m.end()
        elif m.start() >= end:
            right = m.start()
            break
    return left, right


#: Signs of an abnormal exam besides :data:`ABNORMAL`: "pain with flexion", "tender".
ABNORMAL_SIGN = re.compile(
    r"\b(?:pain(?:ful)? (?:with|on)|tender\w*|limited|reduced|swollen|swelling|labile|mild(?:ly)?|"
    r"moderate(?:ly)?|severe(?:ly)?|slight(?:ly)?)\b",
    re.I,
)


def words_near(sentence: str, start: int, end: int, before: int = 6, after: int = 4) -> str:
    """The words next to a mention in its statement (``before`` words before it, ``after``
    after it), without the mention's own words ("high blood pressure" holds no cue about
    itself): where a cue about the mention sits in an unpunctuated transcript."""
    left, right = clause_span(sentence, start, end)
    head = sentence[left:start].split()[-before:]
    tail = sentence[end:right].split()[:after]
    return " ".join([*head, "…", *tail])
