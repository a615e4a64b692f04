"""The grounding layer: what every judge stands on — which backend it runs on and, offline,
where in the source a claim finds its evidence. Judges, CEF, fact-checking and the injectors
import it; it imports none of them."""
