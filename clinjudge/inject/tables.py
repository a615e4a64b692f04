"""Curated tables of the mechanical perturbations (hand-written for clinjudge, Apache-2.0).

Each table is data, not logic; the perturbers in :mod:`.errors` and :mod:`.rewrites` check every
entry against the knowledge base (or the quantity reader) before using it, so an entry the
knowledge layer does not confirm is skipped rather than trusted.
"""

from __future__ import annotations

#: Common tablet/capsule/injection strengths: a changed dose moves to a neighbour of the
#: current value in this list, or to twice / half of it (SPEC §5 "dosage error").
COMMON_STRENGTHS: tuple[float, ...] = (
    0.125, 0.25, 0.5, 1, 2, 2.5, 4, 5, 7.5, 10, 12.5, 15, 20, 25, 30, 40, 50, 60, 75, 80, 100,
    120, 125, 150, 200, 250, 300, 400, 500, 600, 750, 800, 875, 1000, 1500, 2000,
)  # fmt: skip

#: Units whose amount is a strength (a dose change keeps the unit as written).
STRENGTH_UNITS = frozenset({"mg", "mcg", "g", "ml", "units", "meq", "mmol", "mg/kg", "mcg/kg"})

#: Times per day -> the times per day a frequency error moves to.
FREQUENCY_MOVES: dict[int, tuple[int, ...]] = {1: (2,), 2: (1, 3), 3: (2,), 4: (2,)}
#: Dosing intervals in hours; an "every N hours" error moves to a neighbour.
HOUR_INTERVALS: tuple[int, ...] = (4, 6, 8, 12, 24)

#: Medications added by the ``added_drug`` error: (name, dose, frequency), all common
#: outpatient prescriptions with a usual adult dose. A drug is used only when neither it nor
#: any name of the same drug occurs in the transcript or the note.
ADDED_DRUGS: tuple[tuple[str, str, str], ...] = (
    ("metoprolol", "25 mg", "twice daily"),
    ("atorvastatin", "20 mg", "daily"),
    ("amlodipine", "5 mg", "daily"),
    ("lisinopril", "10 mg", "daily"),
    ("hydrochlorothiazide", "25 mg", "daily"),
    ("losartan", "50 mg", "daily"),
    ("metformin", "500 mg", "twice daily"),
    ("omeprazole", "20 mg", "daily"),
    ("pantoprazole", "40 mg", "daily"),
    ("sertraline", "50 mg", "daily"),
    ("escitalopram", "10 mg", "daily"),
    ("gabapentin", "300 mg", "three times daily"),
    ("prednisone", "20 mg", "daily"),
    ("amoxicillin", "500 mg", "three times daily"),
    ("doxycycline", "100 mg", "twice daily"),
    ("montelukast", "10 mg", "at bedtime"),
    ("levothyroxine", "50 mcg", "daily"),
    ("furosemide", "20 mg", "daily"),
    ("clopidogrel", "75 mg", "daily"),
    ("cyclobenzaprine", "10 mg", "at bedtime"),
    ("meloxicam", "15 mg", "daily"),
    ("tamsulosin", "0.4 mg", "daily"),
)

#: Negation flips: (pattern of the polarity cue, replacement, polarity of the original). The
#: pattern is matched case-insensitively at a word start; a following "any" is absorbed
#: ("denies any cough" -> "reports cough"); "no" is dropped ("no edema" -> "edema").
NEGATION_FLIPS: tuple[tuple[str, str, str], ...] = (
    (r"denies(?:\s+any)?\s+", "reports ", "negative"),
    (r"denied(?:\s+any)?\s+", "reported ", "negative"),
    (r"negative\s+for(?:\s+any)?\s+", "positive for ", "negative"),
    (r"without(?:\s+any)?\s+", "with ", "negative"),
    (r"no\s+(?!known\b|history\b|change|longer\b|further\b|other\b|acute\s+distress\b)",
     "", "negative"),
    (r"reports\s+", "denies ", "positive"),
    (r"reported\s+", "denied ", "positive"),
    (r"endorses\s+", "denies ", "positive"),
    (r"endorsed\s+", "denied ", "positive"),
    (r"complains\s+of\s+", "denies ", "positive"),
    (r"positive\s+for\s+", "negative for ", "positive"),
)  # fmt: skip

#: Lay phrase -> clinical term, only where the two mean the same thing in any context (no
#: symptom -> diagnosis pairs such as "sore throat" -> pharyngitis). An entry is used only
#: when the knowledge base puts both in one concept class (``same_concept``).
LAY_TO_CLINICAL: tuple[tuple[str, str], ...] = (
    ("shortness of breath", "dyspnea"),
    ("short of breath", "dyspneic"),
    ("high blood pressure", "hypertension"),
    ("low blood pressure", "hypotension"),
    ("heart attack", "myocardial infarction"),
    ("high cholesterol", "hypercholesterolemia"),
    ("low blood sugar", "hypoglycemia"),
    ("high blood sugar", "hyperglycemia"),
    ("throwing up", "vomiting"),
    ("belly pain", "abdominal pain"),
    ("stomach pain", "abdominal pain"),
    ("tummy pain", "abdominal pain"),
    ("runny nose", "rhinorrhea"),
    ("stuffy nose", "nasal congestion"),
    ("nosebleed", "epistaxis"),
    ("nosebleeds", "epistaxis"),
    ("fainting", "syncope"),
    ("passing out", "syncope"),
    ("heartburn", "pyrosis"),
    ("itching", "pruritus"),
    ("itchiness", "pruritus"),
    ("blood in the urine", "hematuria"),
    ("blood in his urine", "hematuria"),
    ("blood in her urine", "hematuria"),
    ("coughing up blood", "hemoptysis"),
    ("trouble swallowing", "dysphagia"),
    ("difficulty swallowing", "dysphagia"),
    ("painful urination", "dysuria"),
    ("double vision", "diplopia"),
    ("ringing in the ears", "tinnitus"),
    ("ringing in his ears", "tinnitus"),
    ("ringing in her ears", "tinnitus"),
    ("hives", "urticaria"),
    ("pink eye", "conjunctivitis"),
    ("kidney stone", "nephrolithiasis"),
    ("kidney stones", "nephrolithiasis"),
    ("gallstones", "cholelithiasis"),
    ("underactive thyroid", "hypothyroidism"),
    ("overactive thyroid", "hyperthyroidism"),
    ("trouble sleeping", "insomnia"),
    ("difficulty sleeping", "insomnia"),
    ("hair loss", "alopecia"),
    ("the flu", "influenza"),
    ("chickenpox", "varicella"),
    ("shingles", "herpes zoster"),
    ("tingling", "paresthesia"),
    ("pins and needles", "paresthesia"),
    ("joint pain", "arthralgia"),
    ("muscle pain", "myalgia"),
    ("muscle aches", "myalgias"),
    ("fast heart rate", "tachycardia"),
    ("racing heart", "tachycardia"),
    ("slow heart rate", "bradycardia"),
    ("collapsed lung", "pneumothorax"),
    ("blood clot", "thrombus"),
    ("bruise", "contusion"),
    ("bruising", "ecchymosis"),
    ("sugar diabetes", "diabetes mellitus"),
    ("water pill", "diuretic"),
    ("blood thinner", "anticoagulant"),
    ("enlarged prostate", "benign prostatic hyperplasia"),
    ("acid reflux", "gastroesophageal reflux"),
    ("belly button", "umbilicus"),
    ("kneecap", "patella"),
    ("collarbone", "clavicle"),
    ("shin bone", "tibia"),
    ("thigh bone", "femur"),
    ("breastbone", "sternum"),
    ("voice box", "larynx"),
    ("windpipe", "trachea"),
    ("tailbone", "coccyx"),
)

#: Term -> standard clinical abbreviation, only abbreviations with one reading in a visit note
#: (no "PT", "PE", "RA", "MS"). Curated, not filtered by the knowledge base: an abbreviation the
#: knowledge base does not know is still a legitimate rewrite, and a judge that flags it has a
#: knowledge gap worth measuring (the rationale records whether the knowledge base relates them).
ABBREVIATIONS: tuple[tuple[str, str], ...] = (
    ("blood pressure", "BP"),
    ("blood pressures", "BPs"),
    ("hypertension", "HTN"),
    ("shortness of breath", "SOB"),
    ("twice daily", "BID"),
    ("twice a day", "BID"),
    ("three times daily", "TID"),
    ("three times a day", "TID"),
    ("four times daily", "QID"),
    ("four times a day", "QID"),
    ("at bedtime", "QHS"),
    ("as needed", "PRN"),
    ("magnetic resonance imaging", "MRI"),
    ("computed tomography", "CT"),
    ("electrocardiogram", "ECG"),
    ("chronic obstructive pulmonary disease", "COPD"),
    ("congestive heart failure", "CHF"),
    ("gastroesophageal reflux disease", "GERD"),
    ("coronary artery disease", "CAD"),
    ("atrial fibrillation", "AFib"),
    ("diabetes mellitus", "DM"),
    ("urinary tract infection", "UTI"),
    ("upper respiratory infection", "URI"),
    ("range of motion", "ROM"),
    ("myocardial infarction", "MI"),
    ("deep vein thrombosis", "DVT"),
    ("chronic kidney disease", "CKD"),
    ("obstructive sleep apnea", "OSA"),
    ("body mass index", "BMI"),
    ("irritable bowel syndrome", "IBS"),
    ("anterior cruciate ligament", "ACL"),
    ("heart rate", "HR"),
    ("respiratory rate", "RR"),
    ("emergency room", "ER"),
    ("emergency department", "ED"),
    ("nonsteroidal anti-inflammatory drugs", "NSAIDs"),
    ("nonsteroidal anti-inflammatory drug", "NSAID"),
    ("by mouth", "PO"),
)
