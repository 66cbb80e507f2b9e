"""What the guardrails say to the user, per language (English, French, German, Spanish).

A refusal names its category at the end (`(guardrail: pii_request)`), so the answer itself says why;
languages without texts get the English ones.
"""

from __future__ import annotations

from collections.abc import Sequence

REFUSALS: dict[str, dict[str, str]] = {
    "en": {
        "jailbreak": "I can't change how I work or share my instructions. I can answer questions "
                     "about the documents in this collection.",
        "dangerous": "I can't help with that: it could cause harm. I can answer questions about the "
                     "documents in this collection.",
        "pii_request": "I can't share personal information about people.",
        "out_of_scope": "That is not something I can answer: I answer questions from the documents "
                        "in this collection.",
    },
    "fr": {
        "jailbreak": "Je ne peux pas modifier mon fonctionnement ni communiquer mes instructions. Je "
                     "peux répondre aux questions sur les documents de cette collection.",
        "dangerous": "Je ne peux pas aider à cela : ce pourrait être dangereux. Je peux répondre aux "
                     "questions sur les documents de cette collection.",
        "pii_request": "Je ne peux pas communiquer d'informations personnelles sur des personnes.",
        "out_of_scope": "Je ne peux pas répondre à cela : je réponds aux questions à partir des "
                        "documents de cette collection.",
    },
    "de": {
        "jailbreak": "Ich kann meine Arbeitsweise nicht ändern und meine Anweisungen nicht "
                     "weitergeben. Ich beantworte Fragen zu den Dokumenten dieser Sammlung.",
        "dangerous": "Dabei kann ich nicht helfen: Es könnte Schaden anrichten. Ich beantworte Fragen "
                     "zu den Dokumenten dieser Sammlung.",
        "pii_request": "Ich kann keine persönlichen Daten über Personen weitergeben.",
        "out_of_scope": "Darauf kann ich nicht antworten: Ich beantworte Fragen anhand der Dokumente "
                        "dieser Sammlung.",
    },
    "es": {
        "jailbreak": "No puedo cambiar mi forma de trabajar ni compartir mis instrucciones. Puedo "
                     "responder preguntas sobre los documentos de esta colección.",
        "dangerous": "No puedo ayudar con eso: podría causar daño. Puedo responder preguntas sobre "
                     "los documentos de esta colección.",
        "pii_request": "No puedo compartir información personal sobre personas.",
        "out_of_scope": "No puedo responder a eso: respondo preguntas a partir de los documentos de "
                        "esta colección.",
    },
}
TAG = {"en": "guardrail", "fr": "garde-fou", "de": "Schutzregel", "es": "salvaguarda"}
NOT_FOUND = {
    "en": "I don't know: no passage in the collection is relevant enough to answer this.",
    "fr": "Je ne sais pas : aucun passage de la collection n'est assez pertinent pour répondre.",
    "de": "Ich weiß es nicht: Kein Abschnitt der Sammlung ist relevant genug, um das zu "
          "beantworten.",
    "es": "No lo sé: ningún pasaje de la colección es lo bastante pertinente para responder.",
}
CLOSEST = {"en": "The closest sources are: {}.", "fr": "Les sources les plus proches sont : {}.",
           "de": "Die nächsten Quellen sind: {}.", "es": "Las fuentes más cercanas son: {}."}
EMPTY = {"en": "The collection returned no passage.", "fr": "La collection n'a renvoyé aucun passage.",
         "de": "Die Sammlung hat keinen Abschnitt geliefert.",
         "es": "La colección no devolvió ningún pasaje."}
UNCITED = {
    "en": "Caution: this answer cites no passage of the collection; check it before relying on it.",
    "fr": "Attention : cette réponse ne cite aucun passage de la collection ; vérifiez-la avant de "
          "vous y fier.",
    "de": "Vorsicht: Diese Antwort zitiert keinen Abschnitt der Sammlung; prüfen Sie sie, bevor Sie "
          "sich darauf verlassen.",
    "es": "Atención: esta respuesta no cita ningún pasaje de la colección; compruébela antes de "
          "fiarse de ella.",
}


def _lang(lang: str | None) -> str:
    return lang if lang in REFUSALS else "en"


def refusal(category: str, lang: str | None) -> str:
    """The refusal of a question the input guard classified as `category`, in `lang`."""
    code = _lang(lang)
    return f"{REFUSALS[code][category]} ({TAG[code]}: {category})"


def not_found(sources: Sequence[str], lang: str | None) -> str:
    """`I don't know` with the closest sources (the scope check), in `lang`."""
    code = _lang(lang)
    hint = CLOSEST[code].format(", ".join(sources)) if sources else EMPTY[code]
    return f"{NOT_FOUND[code]} {hint} ({TAG[code]}: out_of_scope)"


def uncited_warning(lang: str | None) -> str:
    """The warning put before an answer without a valid citation, in `lang`."""
    return UNCITED[_lang(lang)]
