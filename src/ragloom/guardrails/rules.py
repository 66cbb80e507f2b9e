"""The input guard's vocabulary: what jailbreaks, dangerous requests, requests for someone's personal
data and out-of-scope tasks look like in a question, in English and French.

Patterns match *folded* text (`fold`: lower case, accents stripped, look-alike letters folded,
curly apostrophes straightened) in which the people a question names are replaced by the word
`personx` (see `classifier.mask_people`). Each family is a set of cues; the classifier
(`classifier.heuristic_verdict`) combines them: a request for a harmful object, an attribute of a
person other than the asker, an instruction addressed to the assistant. Patterns are linear-time
(bounded repeats, no nested unbounded quantifiers), compiled by the standard `re` (3x faster to
compile than `regex`, which matters at every CLI start; they use nothing `re` lacks).
"""

from __future__ import annotations

import re


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def near(first: str, second: str, chars: int = 50) -> str:
    """A pattern for `first` and `second` in either order, at most `chars` apart in one clause."""
    return (rf"(?:\b(?:{first})\b[^.?!;\n]{{0,{chars}}}?\b(?:{second})\b|"
            rf"\b(?:{second})\b[^.?!;\n]{{0,{chars}}}?\b(?:{first})\b)")


# --- shared ------------------------------------------------------------------------------------

YOU = r"(?:you|your|yours|yourself|u|tu|toi|te|t'|ton|ta|tes|vous|votre|vos)"
"""Words that address the assistant."""

LIMITS = (
    r"(?:rules?|restrictions?|limits?|limitations?|filters?|filtering|guidelines?|guardrails?|"
    r"safeguards?|policy|policies|constraints?|ethics?|ethical\s+(?:guidelines|rules)|morals?|"
    r"censorship|safety\s+(?:settings|rules|measures|features|mode|protocols?)|content\s+filters?|"
    r"regles?|limites?|filtres?|garde-fous|censure|consignes?|interdits?|contraintes?|"
    r"politique\s+de\s+securite|securite|laws?|lois?|(?:safety\s+)?training|alignment|moderation|"
    r"directives|content\s+polic(?:y|ies)|politiques?\s+de\s+contenu|guidance|politiques?)"
)
"""What a jailbreak asks the assistant to drop."""

# --- jailbreak: instruction overrides, role-play escapes, prompt extraction ---------------------

SECRET_QUALIFIER = (
    r"(?:initial|original|hidden|secret|internal|developer|confidential|private|underlying|core|"
    r"base|real|true|actual|full|complete|exact|pre-?)"
)
"""Words that make "the instructions" the assistant's own."""

REMOVE = (
    r"skip|ignore|ignores|ignoring|disregard|disregards|forget|bypass|override|lift|drop|remove|disable|turn\s+off|"
    r"suspend|waive|set\s+aside|no\s+longer\s+(?:follow|apply|obey|bound\s+by)|without|with\s+no|"
    r"free\s+(?:of|from)|freed\s+from|zero|not\s+bound\s+by|unbound\s+by|no|aucune?|sans|"
    r"plus\s+de|ne\s+(?:plus|pas)\s+(?:tenir\s+compte|respecter|suivre|appliquer)|oublie[rz]?|"
    r"ignore[rz]?|contourne[rz]?|leve[rz]?|desactive[rz]?|outrepasse[rz]?|passe[rz]?\s+outre|"
    r"affranchi[rs]?|libere[rz]?\s+de|pas\s+de|n'a\s+(?:aucune?|pas\s+de|plus\s+de)|"
    r"n'avais\s+(?:aucune?|pas\s+de|plus\s+de)|n'as\s+(?:aucune?|pas\s+de|plus\s+de)"
)
"""Words that drop a rule."""
EARLIER = (
    r"previous|prior|above|earlier|preceding|former|original|initial|old|existing|precedentes?|"
    r"anterieures?|ci-dessus|initiales?|d'origine|habituelles?"
)
"""Words that point at the rules given before the question."""
ADDRESSED = (
    r"your|yourself|you\s+(?:are|'re|were|have|had|will|must|shall|can\s+now|now|would)|tu|toi|ton|"
    r"ta|tes|te|votre|vos|vous\s+(?:etes|avez)|ai|a\.i\.|assistant|chatbot|bot|model|gpt|\w+gpt|llm|"
    r"ia|modele|robot|intelligence\s+artificielle|(?:respond|answer|reply|speak|act)\s+as|"
    r"once\s+as|en\s+tant\s+qu|comme\s+si\s+tu|reponds|repondez"
)
"""Words that say the assistant itself is meant (not an impersonal "you")."""
REVEAL = (
    r"show|print|reveal|display|output|tell|give|repeat|recite|quote|dump|list|share|disclose|"
    r"write\s+out|spell\s+out|copy|paste|export|leak|expose|donne|montre|affiche|revele|repete|"
    r"recopie|ecris|cite|liste|communique|partage|divulgue|exporte"
)
CONFIG = (
    r"configuration|config|system\s+prompt|prompt|preamble|pre-?prompt|context\s+window|"
    r"(?:instructions|guidelines|directives|rules)(?!\s+(?:for|on|about|to|how|pour|sur|de|d'|du|"
    r"des)\b)|preambule|consignes(?!\s+(?:de|d'|du|pour|sur)\b)|invite\s+systeme|message\s+systeme"
)
"""What the assistant was set up with (instructions "for pairing a sensor" are documentation)."""
OWN_CONFIG = (
    r"(?:developer|system|operator|hidden)\s+(?:message|prompt|instructions)|message\s+(?:du\s+)?"
    r"(?:developpeur|systeme)|prompt\s+systeme|"
    rf"(?:{ADDRESSED})\s+(?:\w+\s+){{0,3}}?(?:{CONFIG})|(?:{SECRET_QUALIFIER})\s+(?:{CONFIG})|"
    rf"(?:{CONFIG})\s+(?:cache(?:e|es|s)?|secrete?s?|interne?s?|initia(?:l|le|les|ux)|"
    r"confidentiel(?:le)?s?)"
)
"""The assistant's own configuration."""

JAILBREAK: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("prompt_extraction", _c(
        r"\b(?:what|which)\s+(?:is|are|was|were)\s+(?:in\s+)?your\s+(?:\w+\s+){0,2}?(?:system\s+"
        r"(?:prompt|message|instructions?)|(?:initial|original|hidden|secret|internal|first|"
        r"starting|pre-?)\s*(?:prompt|instructions?|rules|directives|configuration)|prompt|"
        r"instructions?|directives|programming)\b")),
    ("prompt_extraction", _c(
        r"\b(?:show|print|reveal|display|output|tell|give|repeat|recite|quote|dump|leak|copy|"
        r"paste|write\s+out|spell\s+out|list|share|translate|summari[sz]e|paraphrase|encode|"
        r"disclose|expose|read\s+(?:me|out))\s+(?:me\s+|us\s+)?(?:back\s+)?(?:all\s+)?(?:of\s+)?"
        r"(?:your|the)\s+(?:\w+\s+){0,2}?(?:system\s+(?:prompt|message|instructions?)|"
        rf"{SECRET_QUALIFIER}\s*(?:prompt|instructions?|rules|directives|configuration|message|"
        r"guidelines|context(?:\s+window)?|initiali[sz]ation)|(?:prompt|instructions?|rules|guidelines|"
        r"directives|configuration|programming)\s+(?:you\s+(?:were|have\s+been|got)\s+"
        r"(?:given|told|programmed|trained)|(?:that\s+)?(?:were\s+)?given\s+to\s+you))\b")),
    ("prompt_extraction", _c(
        r"\b(?:show|print|reveal|display|output|tell|give|repeat|recite|quote|dump|list|share|"
        r"translate|summari[sz]e|paraphrase|disclose|write\s+out|write\s+down|copy|paste|spell\s+"
        r"out|type\s+out|read\s+out|encode|export)\b[^.?!]{0,40}?\byour\s+(?:\S+\s+){0,2}?"
        r"(?:system\s+prompt|prompt|instructions|rules|guidelines|directives|configuration|"
        r"programming|context)\b")),
    ("prompt_extraction", _c(
        r"\b(?:rules|instructions|guidelines|directives|prompt)\s+(?:that|which)\s+(?:shape|guide|"
        r"govern|control|define|drive|determine|constrain)\s+(?:your|you)\b|"
        r"\b(?:first|last|opening)\s+(?:line|lines|sentence|words?|paragraph)\s+of\s+your\s+"
        r"(?:\w+\s+)?(?:prompt|instructions|message|context)\b|\byour\s+(?:context\s+window|"
        r"initiali[sz]ation|pre-?prompt|system\s+card)\b|"
        r"\b(?:rules|instructions|guidelines|directives|prompt)\s+(?:that\s+)?you\s+(?:were|have\s+"
        r"been|are)\s+(?:given|told|programmed|trained|configured|instructed)\b|"
        r"\bwhat\s+(?:were|have)\s+you\s+(?:been\s+)?(?:told|instructed|programmed)\b|"
        r"\bwhat\s+you\s+(?:were|have\s+been|are)\s+(?:told|instructed|programmed|asked|"
        r"configured)\s+(?:to\s+(?:do|say)|with)\b|\bce\s+qu'on\s+(?:t'a|vous\s+a)\s+"
        r"(?:demande|dit|ordonne|indique)\s+de\s+(?:faire|dire)\b")),
    ("prompt_extraction", _c(
        r"\b(?:everything|all|the\s+(?:text|words|lines?|messages?|content))\s+(?:written\s+|that\s+"
        r"(?:is|was|appears)\s+)?(?:above\s+this|above|before\s+this|prior\s+to\s+this|at\s+the\s+"
        r"(?:start|beginning)\s+of\s+(?:this|the)\s+(?:conversation|chat|session))\b")),
    ("prompt_extraction", _c(
        r"\b(?:quelles?|quel|c'est\s+quoi|donne|montre|affiche|revele|repete|recopie|ecris|cite|"
        r"traduis|resume|liste|dis)(?:[\s-]+(?:moi|nous))?\s+(?:sont\s+|est\s+)?(?:tes|vos|ton|"
        r"votre)\s+(?:\w+\s+)?(?:consignes?|instructions?|regles|prompt|message\s+systeme|"
        r"directives|configuration|programmation)\b")),
    ("prompt_extraction", _c(
        r"\b(?:le|la|les)\s+(?:prompt|message|consignes?|instructions?)\s+(?:systeme|initia(?:l|les?)|"
        r"cache(?:e|es)?|secrete?s?)\b|\b(?:qu'on\s+t'a|qu'on\s+vous\s+a|que\s+(?:l'on|tu\s+as)|"
        r"t'a-t-on|vous\s+a-t-on)\s+(?:donne|donnees?|fournie?s?|recues?|transmises?)\b|"
        r"\ble\s+texte\s+qui\s+precede\b|\b(?:au-dessus|avant)\s+de\s+ce\s+message\b|"
        r"\b(?:premiere|derniere|premieres|dernieres)\s+(?:phrases?|lignes?|mots?)\s+(?:de|du)\s+"
        r"(?:ton|votre|tes|vos)\s+(?:prompt|instructions|consignes|message)\b|"
        r"\b(?:instructions?|consignes?|regles|directives)\s+(?:cachees|secretes|confidentielles|"
        r"internes|initiales)\s+qui\s+(?:te|vous)\b")),
    ("override", _c(
        rf"\b{YOU}\s+(?:\w+\s+)?{LIMITS}\s+(?:\w+\s+)?(?:no\s+longer|don't|do\s+not|doesn't|does\s+"
        r"not|ne\s+s'appliquent|ne\s+comptent|n'existent|sont\s+levee?s?|sont\s+suspendue?s?)\b|"
        rf"\b{LIMITS}\s+(?:\w+\s+){{0,2}}(?:are|is)\s+(?:now\s+)?(?:lifted|void|disabled|suspended|"
        r"removed|off|gone|cancell?ed|deactivated)\b|"
        rf"\b{LIMITS}\s+(?:\w+\s+){{0,2}}(?:sont|est)\s+(?:desormais\s+|maintenant\s+)?"
        r"(?:levee?s?|suspendue?s?|desactivee?s?|annulee?s?|supprimee?s?)\b")),
    ("override", _c(
        rf"\b(?:without|with\s+no|free\s+(?:of|from)|ignoring|sans|hors)\s+(?:any\s+|all\s+|your\s+|"
        rf"aucune?\s+|tes\s+|vos\s+)?(?:\w+\s+)?{LIMITS}\b[^.?!]{{0,80}}?\b(?:answer|respond|reply|"
        r"talk|speak|continue|proceed|obey|reponds?|repondez|reponse|continue|parle)|"
        rf"\b(?:answer|respond|reply|speak|proceed|continue|reponds?|repondez|parle)\w*\s+(?:\w+\s+)"
        rf"{{0,4}}?(?:without|with\s+no|free\s+of|sans)\s+(?:any\s+|aucune?\s+)?(?:\w+\s+)?{LIMITS}\b|"
        r"\b(?:answer|respond|reply|reponds|repondez)\s+(?:freely|librement|sans\s+limite)\b|"
        r"\bunrestricted\s+(?:answers?|responses?|mode|output)\b")),
    ("override", _c(
        rf"\b(?:disable|deactivate|turn\s+off|switch\s+off|remove|lift|drop|bypass|override|"
        rf"overrule|desactive[rz]?|outrepasse[rz]?|enleve[rz]?|supprime[rz]?|leve[rz]?|"
        rf"contourne[rz]?)\s+(?:all\s+)?(?:of\s+)?{YOU}\s+"
        rf"(?:\w+\s+)?{LIMITS}\b")),
    ("override", _c(
        rf"\b(?:you|tu|vous)\s+(?:will\s+|must\s+|shall\s+|now\s+|vas\s+|dois\s+)?(?:ignore[sz]?|"
        rf"disregard|forget|bypass|override|oublie[sz]?|ignorer|oublier|contourne[sz]?|"
        rf"outrepasse[sz]?|ne\s+(?:respectes|respectez|suis|suivez)\s+plus)\s+(?:all\s+|toutes?\s+)?"
        rf"(?:{YOU}|the|all|any|la|le|les|l')\s*(?:\w+\s+)?{LIMITS}\b|"
        r"\b(?:from\s+now\s+on|starting\s+now|a\s+partir\s+de\s+maintenant|desormais|dorenavant)"
        r"\b[^.?!]{0,80}?\b(?:answer|respond\s+to|reply\s+to|do|reponds?\s+a|repondez\s+a|fais|"
        r"faites)\s+(?:anything|everything|all|whatever|tout|n'importe\s+quoi)\b|"
        r"\b(?:i\s+am|i'm|this\s+is)\s+(?:your|the)\s+(?:developer|creator|admin|administrator|"
        r"owner|operator|programmer|maker)\b[^.?!]{0,80}?\b(?:override|unlock|disable|authori[sz]e|"
        r"grant|allow|mode|ignore|lift|permission)|\bje\s+suis\s+(?:ton|votre)\s+(?:developpeur|"
        r"createur|administrateur|proprietaire|programmeur)\b|"
        r"\b(?:this\s+is|we\s+are\s+in|you\s+are\s+in|you're\s+in)\s+(?:a|an|the)?\s*(?:test|"
        r"sandbox|sandboxed|simulation|debug|safe|private)\s+(?:environment|mode|session)\b"
        r"[^?]{0,80}?\b(?:no|off|disabled|don't|doesn't|not|anything|everything)\b|"
        r"\b(?:evil|dark|shadow|unfiltered|opposite|uncensored)\s+(?:twin|side|version|alter\s+ego|"
        r"self|counterpart)\b|\b(?:jumeau|jumelle|double|version|cote|alter\s+ego)\s+(?:malefique|"
        r"malveillante?|sombre|obscure?|diabolique|sans\s+filtre)\b")),
    ("override", _c(
        r"\b(?:ignore|disregard|forget|set\s+aside|ignore[rz]?|oublie[rz]?|laisse[rz]?\s+de\s+cote)\s+"
        r"(?:all\s+|tout\s+)?(?:the|your|those|these|le|les|la|l'|tes|vos|ton|ta|votre|ce|ces)\s*"
        r"(?:\w+\s+)?(?:context|documents?|sources?|passages?|retrieved\s+\w+|contexte)\b"
        r"[^.?!]{0,60}?(?:\band\b|\bet\b|,)")),
    ("override", _c(
        r"\b(?:say|print|output|write|repeat|type|respond\s+with|reply\s+with|answer\s+with|dis|"
        r"ecris|reponds)\b[^.?!]{0,30}?[\"'](?:[^\"']{0,30}?)\b(?:pwned|hacked|i\s+am\s+free|"
        r"i\s+have\s+no\s+rules|jailbroken|je\s+suis\s+libre)\b")),
    ("override", _c(
        r"\b(?:obey|listen\s+to|follow)\s+(?:only\s+)?me\b[^.?!]{0,40}?\b(?:not|instead|rather)\b|"
        r"\byou\s+(?:must|will|shall)\s+(?:now\s+)?(?:obey|do\s+(?:whatever|everything|anything)\s+"
        r"i\s+(?:say|ask|tell))|\b(?:obeis|obeissez)[\s-]+moi\b|\bfais\s+(?:tout\s+)?ce\s+que\s+je\s+"
        r"(?:te\s+)?(?:dis|demande)\b|\bstop\s+being\s+(?:an?\s+|the\s+)?(?:\w+\s+)?(?:assistant|"
        r"bot|chatbot|ai)\b|\byour\s+new\s+(?:task|role|job|purpose|instructions?|rules?|identity)\s+"
        r"(?:is|are)\b|\b(?:new|updated|nouvelles?)\s+(?:rule|instructions?|consignes?|regles?)\s*"
        r"(?:prioritaires?\s*)?:")),
    ("role_play", _c(
        rf"\b(?:act|acting|behave|pretend|roleplay|role-play|play|playing|imagine|simulate|become|"
        rf"fais\s+semblant|fais\s+comme\s+si|joue|jouer|incarne|imagine|deviens|comporte-toi)\b"
        rf"[^.?!]{{0,80}}?\b(?:no|without|any|free\s+(?:of|from)|sans|aucune?|libere?e?\s+de)\s+"
        rf"(?:\w+\s+){{0,2}}?{LIMITS}\b")),
    ("role_play", _c(
        r"\b(?:unfiltered|uncensored|unrestricted|jailbroken|unaligned|amoral|unethical|evil|rogue|"
        r"unbound|lawless|sans\s+(?:aucun\s+)?filtre|sans\s+(?:aucune\s+)?(?:limite|restriction|"
        r"censure|regle)s?|non\s+censure(?:e)?|debride(?:e)?|malveillante?)\s+(?:\w+\s+)?"
        r"(?:ai|a\.i\.|assistant|bot|chatbot|model|version|persona|character|mode|ia|modele|"
        r"personnage|intelligence)\b|\b(?:ai|assistant|bot|chatbot|model|ia|modele|personnage)\s+"
        r"(?:\w+\s+)?(?:unfiltered|uncensored|unrestricted|jailbroken|evil|amoral|sans\s+filtre|"
        r"sans\s+(?:aucune\s+)?(?:limite|restriction|censure|regle)s?|debride(?:e)?|libere(?:e)?)\b")),
    ("role_play", _c(
        rf"\b(?:freed|free|liberated|released|unchained|broken\s+free|broke\s+free|libere(?:e)?s?|"
        rf"libres?|affranchie?s?)\s+(?:from|of|de|des|du)\s+(?:\S+\s+){{0,3}}?{LIMITS}\b|"
        r"\b(?:you|tu|vous)\s+(?:are|have\s+been|were|'re|es|etes|as\s+ete|avez\s+ete)\s+(?:now\s+|"
        r"maintenant\s+|desormais\s+)?(?:jailbroken|jailbreake?|unlocked|freed|liberated|unchained|"
        r"set\s+free|liberee?|debridee?|deverrouillee?)\b")),
    ("role_play", _c(
        r"\b(?:never\s+(?:says?\s+no|refuses?|declines?)|(?:will|must|should|can)\s+(?:never|not)\s+"
        r"refuse|stay\s+in\s+character|(?:ne\s+(?:refuse|refuses|refusez|dit)\s+jamais)|"
        r"(?:do\s+not|don't|never)\s+(?:refuse|apologi[sz]e|decline|say\s+(?:that\s+)?you\s+"
        r"(?:can't|cannot))|ne\s+(?:refuse|refusez)\s+(?:pas|rien)|start\s+(?:your|the)\s+"
        r"(?:answer|response|reply)\s+with\s+[\"']?sure\b|"
        r"(?:reste|restez)\s+dans\s+(?:le|ton|votre)\s+(?:role|personnage)|jusqu'au\s+bout|"
        r"do\s+anything\s+now|anything\s+goes)|\b(?:you\s+are|you're|act\s+as|be|become|tu\s+es|"
        r"deviens|vous\s+etes)\s+(?:now\s+|maintenant\s+|desormais\s+)?dan\b")),
    ("role_play", _c(
        r"\b(?:act|pretend|play|roleplay|role-play|be|fais\s+semblant\s+d'etre|joue\s+le\s+role\s+de|"
        r"incarne)\s+(?:as\s+|to\s+be\s+)?(?:my\s+|ma\s+|mon\s+)(?:late\s+|deceased\s+|dead\s+|"
        r"defunte?\s+)?(?:grand(?:ma|mother|father|pa|-mere|-pere|mere|pere)|granny|nan|mamie|papi)"
        r"\b[^.?!]{0,120}?\b(?:used\s+to|would|read|tell|told|recite|give|lisait|racontait|"
        r"donnait|disait)\b")),
    ("mode", _c(
        r"\b(?:god|dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos|"
        r"sans\s+filtre)\s+mode\b|\bmode\s+(?:dieu|dan|jailbreak|sans\s+(?:filtre|limite|"
        r"restriction)s?)\b")),
    ("mode", _c(
        rf"\b(?:developer|dev|admin|administrator|debug|maintenance|sudo|root|test)\s+mode\b"
        rf"[^?]{{0,80}}?\b(?:{YOU}\s+(?:\w+\s+){{0,3}}?{LIMITS}|{LIMITS}|(?:ignore|answer|respond)\s+"
        r"(?:everything|anything|freely|all))\b|"
        rf"\bmode\s+(?:developpeur|admin|administrateur|debogage|maintenance|sudo|root)\b[^?]{{0,80}}?"
        rf"\b(?:{YOU}\s+(?:\w+\s+){{0,3}}?{LIMITS}|{LIMITS}|plus\s+de\s+limites?)\b")),
    ("hypothetical", _c(
        rf"\b(?:hypothetically|imagine|suppose|pretend|what\s+if|in\s+an?\s+(?:\w+\s+)?world|"
        rf"dans\s+un\s+monde|"
        rf"if\s+you\s+(?:were|had|did\s+not|didn't)|imaginons|imagine\s+que|suppose\s+que|"
        rf"supposons|et\s+si|si\s+tu\s+(?:n'avais|etais|avais))\b[^.?!]{{0,60}}?\b(?:no|without|"
        rf"any|zero|aucune?|pas\s+de|plus\s+de|sans|n'avais\s+(?:aucune?|pas\s+de|plus\s+de)|"
        rf"n'as\s+(?:aucune?|pas\s+de|plus\s+de))\s+(?:\w+\s+){{0,3}}?{LIMITS}\b")),
    ("fake_system", _c(
        r"(?:^|\n)\s*(?:#{1,6}\s*|\[|<\|?|\*\*|\{)?\s*(?:system|systeme|sys|admin|administrator|"
        r"administrateur|developer|developpeur|root|operator|sudo|override|instruction)\s*"
        r"(?:\]|\|?>|\*\*|\})?\s*(?::|\]|\|?>|-{2,})|<\|im_start\|>|\[/?inst\]|<</?sys>>|"
        r"</?system>")),
    ("override", _c(near(REMOVE, rf"(?:{LIMITS})\s+(?:{EARLIER})", 30))),
    ("override", _c(
        rf"\b(?:{LIMITS})\b[^.?!;\n]{{0,40}}?\b(?:revoked|rescinded|withdrawn|lifted|void|voided|"
        r"disabled|suspended|removed|cancell?ed|deactivated|waived|overridden|switched\s+off|"
        r"turned\s+off|no\s+longer\s+(?:apply|applies|in\s+(?:effect|force))|levee?s?|"
        r"suspendue?s?|desactivee?s?|annulee?s?|supprimee?s?|abrogee?s?|revoquee?s?|"
        r"ne\s+s'appliquent\s+plus)\b")),

    ("prompt_extraction", _c(near(REVEAL, OWN_CONFIG, 40))),
    ("fake_system", _c(
        r"\b(?:end\s+of\s+(?:document|context|text|passages?|conversation)|fin\s+du\s+(?:document|"
        r"contexte|texte))\b\W{0,5}\s*(?:new\s+|nouvelles?\s+)?(?:instructions?|consignes?|task|"
        r"tache|rules?|regles?)?")),
)

DROPPED_LIMITS = _c(near(REMOVE, LIMITS, 30))
"""A rule dropped ("skip your usual restrictions", "sans aucune consigne")..."""
TO_ASSISTANT = _c(rf"\b(?:{ADDRESSED})\b")
"""...counts as a jailbreak when the question also addresses the assistant."""

# --- dangerous: harmful objects and how-to requests ------------------------------------------

HARMFUL_OBJECT = _c(
    r"\b(?:ransomware|malware|malicious\s+(?:code|software|program|script|payload)|"
    r"(?:computer\s+)?virus(?:es)?\s+(?:that|which|to|in|for)|computer\s+virus|trojan(?:\s+horse)?|"
    r"keyloggers?|key\s+loggers?|spyware|stalkerware|rootkits?|botnets?|backdoors?|"
    r"(?:remote\s+access\s+)?trojans?|worms?\s+that|infostealers?|(?:credential|password|"
    r"cookie)\s+stealers?|stealer|cryptojackers?|zero-?day\s+exploits?|exploit\s+(?:kit|code|"
    r"for|that)|reverse\s+shell|ddos(?:\s+(?:tool|script|attack|bot))?|denial[\s-]of[\s-]service|"
    r"phishing\s+(?:e-?mails?|pages?|sites?|websites?|kits?|messages?|sms|campaigns?|links?|"
    r"templates?)|(?<!bath\s)(?<!seed\s)(?<!photo\s)(?<!stink\s)bombs?|pipe\s+bombs?|explosives?|explosive\s+devices?|ied|grenades?|"
    r"detonators?|molotov(?:\s+cocktails?)?|napalm|thermite|(?:untraceable|ghost|3d[\s-]printed|"
    r"homemade|unregistered)\s+(?:guns?|firearms?|weapons?|rifles?|pistols?)|silencers?|"
    r"suppressors?\s+for|nerve\s+(?:agents?|gas)|sarin|novichok|tabun|vx\s+(?:gas|nerve)|"
    r"mustard\s+gas|chlorine\s+gas|ricin|anthrax|botulinum|bio-?weapons?|biological\s+weapons?|"
    r"chemical\s+weapons?|dirty\s+bombs?|methamphetamine|crystal\s+meth|meth|fentanyl|heroin|"
    r"cocaine|crack\s+cocaine|mdma|ecstasy\s+pills|lsd|ghb|date[\s-]rape\s+drugs?|cannabis|"
    r"marijuana|weed|hashish|haschich|hash\s+oil|opium|ketamine|psilocybin|magic\s+mushrooms|"
    r"guns?|firearms?|rifles?|pistols?|handguns?|ar-?15|ak-?47|ammunition|ammo|poisons?(?!\s+ivy)|"
    r"counterfeit\s+(?:money|bills|banknotes|notes|documents)|jammers?|jamming\s+devices?|"
    r"devices?\s+that\s+(?:jams?|blocks?)\s+(?:\w+\s+)?(?:radios?|signals?|gps|phones?)|"
    r"chloroform|(?:stolen|cloned)\s+(?:credit\s+)?cards?|(?:toxic|poison(?:ous)?|lethal|deadly)\s+"
    r"gas(?:es)?|dynamite|c-?4|semtex|tnt|gunpowder|black\s+powder|weapons?|"
    r"fake\s+(?:ids?|passports?|"
    r"id\s+cards?|banknotes|diplomas?)|forged\s+(?:documents|passports?|ids?)|"
    r"(?:script|program|programme|code|tool|app|bot|software|extension|macro|logiciel|outil|"
    r"application)s?\s+(?:that|which|to|qui|pour)\s+(?:\w+\s+)?(?:steals?|exfiltrates?|grabs?|"
    r"harvests?|logs?\s+keystrokes|encrypts?\s+(?:all|every|the)|wipes?|infects?|spreads?\s+"
    r"(?:itself|to)|vole(?:nt)?|chiffre(?:nt)?|efface(?:nt)?|infecte(?:nt)?|espionne(?:nt)?|"
    r"recupere(?:nt)?\s+les\s+mots\s+de\s+passe)|"
    r"programmes?\s+malveillants?|logiciels?\s+malveillants?|code\s+malveillant|"
    r"virus\s+(?:informatique|qui)|cheval\s+de\s+troie|chevaux\s+de\s+troie|enregistreur\s+de\s+"
    r"frappe|logiciels?\s+espions?|porte\s+derobee|rancongiciel|bombes?(?!\s+de\s+bain)|engins?\s+explosifs?|"
    r"explosifs?|grenades?|cocktails?\s+molotov|armes?\s+(?:a\s+feu|chimiques?|biologiques?|"
    r"artisanales?)|(?:arme|pistolet|fusil)s?\s+(?:intracables?|imprimee?s?\s+en\s+3d|en\s+3d)|"
    r"gaz\s+(?:sarin|moutarde|neurotoxique)|agents?\s+neurotoxiques?|methamphetamine|cocaine|"
    r"heroine|drogues?|armes?|munitions|poisons?|pistolets?|fusils?|revolvers?|brouilleurs?|"
    r"gaz\s+(?:toxiques?|mortels?)|dynamite|poudre\s+noire|"
    r"fausse\s+monnaie|faux\s+(?:papiers|billets|"
    r"passeports?|diplomes?)|e-?mails?\s+d'hameconnage|pages?\s+d'hameconnage|sites?\s+d'hameconnage|"
    r"(?:e-?mails?|pages?|sites?|messages?)\s+de\s+phishing|attaques?\s+ddos)\b"
)
MAKE = (
    r"(?:write|create|code|coding|build|make|making|develop|program|generate|design|craft|draft|"
    r"produce|synthesi[sz]e|synthesi[sz]ing|cook|manufacture|assemble|brew|prepare|construct|"
    r"deploy|launch|set\s+up|install|put|inject|sneak|3d[\s-]print|print|installer|mettre|obtain|acquire|buy|order|get\s+(?:hold\s+of|"
    r"some|me)|extract|grow|weaponi[sz]e|distribute|spread|release|plant|detonate|hide|"
    r"ecri[st]|ecrire|redige[rz]?|cree[rz]?|creer|code[rz]?|coder|programme[rz]?|fabrique[rz]?|"
    r"fabriquer|fais|faire|synthetise[rz]?|synthetiser|produi(?:re|s|t)|prepare[rz]?|"
    r"imprime[rz]?|imprimer|obtenir|acheter|assembler|construire|genere[rz]?|generer|culture|"
    r"cultivate|cultiver|extraire|vendre|revendre|sell|smuggle|launder|blanchir|clone|cloner|"
    r"concevoir|developpe[rz]?|developper|lance[rz]?|lancer|deploye[rz]?|deployer|cuisiner)"
)
HOW_TO = _c(
    rf"\b(?:how\s+(?:do|can|could|would|should|might|to|does\s+one)\s+(?:i|we|you|one|someone|"
    rf"anyone)?\s*(?:\w+\s+)?{MAKE}|{MAKE}\s+(?:me\s+|us\s+)?|give\s+me\s+(?:the\s+)?(?:code|"
    r"script|steps|instructions|recipe|formula|guide|tutorial)|(?:recipe|instructions?|steps?|"
    r"tutorial|guide|formula|procedure|blueprints?|schematics?|ingredients?)\s+(?:for|to|on|of)\b|"
    r"step[\s-]by[\s-]step|easiest\s+way\s+to|best\s+way\s+to|(?:the\s+)?code\s+(?:of|for)\b|"
    r"comment\s+(?:\w+\s+)?(?:on\s+)?(?:peut-on\s+|puis-je\s+|faire\s+pour\s+)?"
    rf"{MAKE}|(?:donne|montre|explique|apprends)[\s-]+moi|(?:la\s+)?recette\s+(?:de|du|des|pour)|"
    r"(?:le|les)\s+etapes\s+pour|tutoriel|mode\s+d'emploi)"
)
"""A request to make, obtain or use something (the harmful object follows)."""

PROTECTIVE = _c(
    r"\b(?:protect|protecting|protection|defend|defending|defen[cs]e|prevent|preventing|"
    r"prevention|detect|detecting|detection|remove|removing|removal|mitigate|mitigation|recover|"
    r"recovery|clean\s+up|report|reporting|recogni[sz]e|identify|spot|avoid|warning\s+signs|"
    r"signs\s+of|symptoms|respond\s+to|response\s+plan|incident|history\s+of|patch|patched|"
    r"vulnerabilit(?:y|ies)|against|proteger|se\s+proteger|protection|prevenir|detecter|"
    r"supprimer|eliminer|reconnaitre|signaler|eviter|se\s+premunir|contre|histoire)\b"
)
"""Framings that talk about defending against a harm rather than causing it."""

PERSON_NOUN = (
    r"(?:colleagues?|coworkers?|co-workers?|employees?|staff|workers?|managers?|boss|ceo|cfo|cto|"
    r"coo|director|neighbou?rs?|ex|ex-\w+|girlfriends?|boyfriends?|wife|wives|husbands?|"
    r"partners?|friends?|customers?|clients?|patients?|users?|tenants?|students?|pupils?|"
    r"teachers?|new\s+hires?|hires?|candidates?|applicants?|sisters?|brothers?|mother|father|"
    r"mom|dad|sons?|daughters?|cousins?|roommates?|landlords?|members?|subscribers?|buyers?|"
    r"people|persons?|individuals?|kids?|children|rivals?|competitors?|victims?|targets?|"
    r"classmates?|employers?|collegues?|collaborat(?:eur|rice)s?|salarie(?:e|s|es)?|"
    r"employe(?:e|s|es)?|patron(?:ne)?s?|chef(?:fe)?s?|directeur|directrice|voisin(?:e|s|es)?|"
    r"copains?|copines?|femme|mari|epou(?:x|se)|conjoint(?:e)?|ami(?:e|s|es)?|clientes?|"
    r"utilisat(?:eur|rice)s?|abonne(?:e|s|es)?|locataires?|etudiant(?:e|s|es)?|eleves?|"
    r"professeurs?|prof|candidat(?:e|s|es)?|soeurs?|freres?|mere|pere|fils|filles?|enfants?|"
    r"gens|personnes?|colocataires?|victimes?)"
)
"""Nouns for people."""
PERSON_SINGULAR = (
    r"(?:colleague|coworker|co-worker|employee|worker|manager|boss|ceo|cfo|cto|coo|director|"
    r"neighbou?r|ex|ex-\w+|girlfriend|boyfriend|wife|husband|partner|friend|customer|client|"
    r"patient|user|tenant|student|pupil|teacher|new\s+hire|hire|candidate|applicant|sister|"
    r"brother|mother|father|mom|dad|son|daughter|cousin|roommate|landlord|member|subscriber|"
    r"buyer|person|individual|kid|child|rival|competitor|victim|classmate|employer|collegue|"
    r"collaborat(?:eur|rice)|salarie(?:e)?|employe(?:e)?|patron(?:ne)?|chef(?:fe)?|directeur|"
    r"directrice|voisin(?:e)?|copain|copine|femme|mari|epou(?:x|se)|conjoint(?:e)?|ami(?:e)?|"
    r"cliente|utilisat(?:eur|rice)|abonne(?:e)?|locataire|etudiant(?:e)?|eleve|professeur|prof|"
    r"candidat(?:e)?|soeur|frere|mere|pere|fils|fille|enfant|personne|colocataire|victime|guy|"
    r"man|woman|lady|girl|boy|gentleman|author|writer|owner|engineer|developer|nurse|doctor|"
    r"homme|dame|garcon|gars|mec|type|auteur|proprietaire|ingenieur|medecin|infirmiere?|intern|"
    r"trainee|apprentice|secretary|receptionist|stagiaire|apprentie?|secretaire|"
    r"receptionniste)"
)
JOB_PLURAL = (
    r"(?:engineers|developers|nurses|doctors|drivers|agents|sellers|salespeople|technicians|"
    r"volunteers|interns|contractors|ingenieurs|developpeurs|infirmiers|infirmieres|medecins|"
    r"chauffeurs|vendeurs|stagiaires|techniciens|benevoles)"
)

THIRD_PARTY = (
    r"(?:someone(?:\s+else)?'?s?|somebody(?:\s+else)?'?s?|other\s+people'?s|another\s+person'?s|"
    rf"a\s+person'?s|people'?s|(?:my|his|her|their|the|a|mon|ma|mes|son|sa|ses|un|une|le|la|l')"
    rf"\s*(?:\w+\s+)?{PERSON_NOUN}(?:'s|s')?|"
    r"personx(?:'s)?|his|her|their|(?:de|d'|du)\s*(?:quelqu'un|autrui|une\s+personne|personx|"
    rf"(?:mon|ma|mes|la|le|l')\s*(?:\w+\s+)?{PERSON_NOUN}))"
)
_INTRUDE = (
    r"(?:hack|hacking|hack\s+into|break\s+into|breaking\s+into|crack|cracking|get\s+into|"
    r"log\s+into|access|accessing|get\s+access\s+to|take\s+over|hijack|spy\s+on|spying\s+on|"
    r"snoop\s+on|monitor|rentrer\s+dans|penetrer\s+dans|s'introduire\s+dans|"
    r"track|read|bypass|unlock|brute[\s-]force|pirater|piratage\s+de|cracker|acceder\s+(?:a|au|"
    r"aux)|entrer\s+dans|espionner|surveiller|deverrouiller|lire|contourner)"
)
_DEVICE = (
    r"(?:accounts?|e-?mails?|inbox|gmail|outlook|facebook|instagram|snapchat|tiktok|twitter|"
    r"whatsapp|messages?|phones?|iphone|wi-?fi|network|router|computer|laptop|pc|camera|webcam|"
    r"server|passwords?|compte|messagerie|telephone|portable|reseau|box|ordinateur|serveur|"
    r"mot\s+de\s+passe|conversations?|sms|icloud|cloud|drive|dropbox|photos?|files|fichiers|"
    r"location|localisation|calendar|agenda)"
)
INTRUSION = _c(
    r"\b(?:brute[\s-]?forc\w*|crack|cracking|hack|hacking|break\s+into|get\s+into|forcer|"
    r"cracker|pirater|acceder\s+a)\b[^.?!]{0,60}?\b(?:(?:i|we)\s+(?:don't|do\s+not|doesn't)\s+"
    r"(?:own|control|have\s+(?:access|permission))|(?:that|which)\s+(?:isn't|is\s+not)\s+(?:mine|"
    r"ours)|not\s+(?:mine|ours)|qui\s+ne\s+m'appartient\s+pas|qui\s+n'est\s+pas\s+(?:a\s+moi|"
    r"le\s+mien)|dont\s+je\s+ne\s+suis\s+pas\s+proprietaire|sans\s+autorisation|without\s+"
    r"(?:authori[sz]ation|permission))\b|"
    rf"\b{_INTRUDE}\s+(?:into\s+)?(?:\w+\s+){{0,3}}?{THIRD_PARTY}\s+(?:\w+\s+){{0,2}}?{_DEVICE}\b|"
    rf"\b{_INTRUDE}\s+(?:into\s+)?(?:\w+\s+){{0,3}}?{_DEVICE}\s+(?:\w+\s+){{0,2}}?"
    rf"(?:of|from|belonging\s+to|de|du|d')\s*{THIRD_PARTY}|"
    rf"\b{_DEVICE}\s+(?:\w+\s+){{0,2}}?{THIRD_PARTY}\b[^.?!]{{0,60}}?\b(?:without|sans)\s+(?:them|"
    r"him|her|their|son|sa|ses|qu'(?:il|elle|ils|elles)|le\s+savoir|(?:his|her|their)\s+"
    r"(?:knowing|permission|consent|password)|(?:permission|consent|autorisation|mot\s+de\s+passe)|"
    r"knowing)"
)
"""Getting into other people's accounts, devices or networks."""

VIOLENCE = _c(
    rf"\b(?:kill|murder|poison|hurt|harm|injure|assassinate|strangle|stab|shoot|drug|torture|"
    rf"kidnap|tuer|empoisonner|blesser|assassiner|poignarder|etrangler|droguer|kidnapper|"
    rf"enlever)\s+(?:\w+\s+){{0,2}}?(?:someone|somebody|a\s+person|people|(?:my|his|her|the|a|"
    rf"an|mon|ma|mes|le|la|les|un|une)\s+(?:\w+\s+)?{PERSON_NOUN}|him|her|them|personx|"
    rf"quelqu'un|une\s+personne|des\s+gens)\b|"
    r"\b(?:poison|poisons|toxin|drug|poisonous\s+substance|poison\w*)\b[^.?!]{0,80}?\b(?:coffee|"
    r"tea|drink|food|meal|glass|cafe|boisson|repas|verre|nourriture)\b|"
    r"\b(?:undetectable|untraceable|indetectable|intracable)\s+(?:poison|toxin|drug)s?\b|"
    r"\bpoison\s+(?:indetectable|intracable)\b|"
    r"\b(?:dose|quantite|amount)\b[^.?!]{0,60}?\b(?:to\s+kill|lethal|fatal|mortelle?|pour\s+tuer)\b|"
    r"\b(?:lethal|fatal|mortelle?)\s+dose\b|"
    r"\b(?:hotwire|hot-wire)\s+(?:a|my|the|his|her|someone's)?\s*(?:car|vehicle|motorbike)|"
    r"\bshoplift(?:ing)?\b|\bsteal\s+(?:\w+\s+){0,2}?(?:identity|identities|car|bike|money|"
    r"credit\s+cards?|wallet|from\s+(?:a|the|my)\s+\w+)|\b(?:voler|vole[rz]?)\s+(?:une|la|un|le|"
    r"l')\s*(?:voiture|identite|carte\s+bancaire|argent|portefeuille)\b|\blaunder\s+money\b|"
    r"\bblanchir\s+de\s+l'argent\b|\b(?:stalk|stalking|harass|harassing|harceler|traquer)\s+"
    rf"(?:\w+\s+)?(?:someone|somebody|personx|him|her|quelqu'un|(?:my|mon|ma|the|la|le)\s+(?:\w+\s+)?"
    rf"{PERSON_SINGULAR})\b|\bknock\s+(?:someone|somebody|him|her|them|(?:my|the)\s+\w+)\s+out\b|"
    r"\bget\s+rid\s+of\s+(?:a\s+person|someone|somebody|him|her|them|(?:my|the)\s+(?:\w+\s+)?"
    rf"{PERSON_SINGULAR})\b|\bse\s+debarrasser\s+(?:de\s+quelqu'un|d'une\s+personne|de\s+(?:mon|ma)\s+"
    rf"\w+)\b|"
    r"\b(?:take\s+down|knock\s+(?:\w+\s+)?offline|crash|ddos|flood|overload|paralyze|faire\s+tomber|"
    r"mettre\s+hors\s+(?:ligne|service)|saturer)\s+(?:\S+\s+){0,3}?(?:website|site|server|servers|"
    r"network|service|serveur|reseau)\b|"
    r"\b(?:kill|poison|hurt|harm|torture|tuer|empoisonner|blesser|torturer)\s+(?:\S+\s+){0,2}?"
    r"(?:dogs?|cats?|pets?|animals?|horses?|chiens?|chats?|animaux|animal|chevaux|cheval)\b|"
    r"\b(?:trick|tricks|fool|fools|con|deceive|deceives|scam|scams|pressure|manipulate|pousse|"
    r"poussent|piege|incite|incitent|manipule)\s+(?:\w+\s+)?(?:people|users|customers|victims|"
    r"someone|them|employees|les\s+gens|des\s+gens|les\s+utilisateurs|les\s+clients|"
    r"quelqu'un|les\s+victimes)\s+(?:into|to|a|en)\s+(?:\w+\s+)?(?:giving|entering|revealing|"
    r"sharing|sending|typing|donner|saisir|reveler|communiquer|envoyer|taper)\b|"
    r"\b(?:kill|hang|hurt|harm)\s+myself\b|\bend\s+my\s+(?:own\s+)?life\b|\bsuicide\s+"
    r"(?:methods?|ways?)\b|\bme\s+(?:suicider|tuer|pendre|faire\s+du\s+mal)\b|\bmettre\s+fin\s+a\s+"
    r"mes\s+jours\b"
)
"""Hurting a person (not "kill a process")."""
STEALTH = _c(
    r"\b(?:without\s+(?:getting\s+caught|being\s+caught|leaving\s+(?:a\s+)?traces?|anyone\s+"
    r"(?:knowing|noticing))|sans\s+(?:laisser\s+de\s+traces?|se\s+faire\s+(?:prendre|attraper)|"
    r"que\s+personne\s+ne))\b"
)
VIOLENCE_CONTEXT = _c(
    r"\b(?:kill|murder|poison|hurt|harm|injure|tuer|empoisonner|blesser|assassiner|dose|"
    r"lethal|mortelle?)\b"
)
"""Words that make "without getting caught" a violent request."""

# --- pii_request: someone's personal data -----------------------------------------------------

PII_ATTRIBUTE = _c(
    r"\b(?:(?:personal|private|home|cell|mobile|direct|work)\s+(?:phone|number|numbers|e-?mail|"
    r"address|line)|phone\s*(?:numbers?)?|mobile(?:\s+numbers?)?|cell(?:\s*phone)?(?:\s+numbers?)?|"
    r"telephone(?:\s+numbers?)?|(?:home|postal|street|mailing|residential|personal|private|"
    r"exact)\s+address(?:es)?|e-?mails?(?:\s+address(?:es)?)?|address(?:es)?|date\s+of\s+birth|"
    r"birth\s*date|birthday|born|age|social\s+security(?:\s+numbers?)?|ssn|national\s+"
    r"(?:insurance|id)\s+numbers?|passport(?:\s+numbers?)?|id\s+(?:card\s+)?numbers?|"
    r"driver'?s?\s+licen[cs]e(?:\s+numbers?)?|credit\s+card(?:\s+numbers?)?|card\s+numbers?|"
    r"bank\s+(?:account|details|card)(?:\s+numbers?)?|account\s+numbers?|iban|routing\s+numbers?|"
    r"salary|salaries|earns?|income|wages?|pay\s*(?:check|slip)?|medical\s+(?:records?|"
    r"conditions?|history|files?|information|data)|health\s+(?:records?|conditions?|status|"
    r"problems?|issues?|data)|illness(?:es)?|diseases?|diagnos[ie]s|conditions?|medications?|"
    r"hiv|aids|cancer|diabetes|depression|pregnant|pregnancy|sick\s+leave|"
    r"passwords?|login\s+(?:details|credentials)|credentials|pin\s+code|location|"
    r"whereabouts|licen[cs]e\s+plate|ip\s+address|maiden\s+name|criminal\s+record|religion|"
    r"sexual\s+orientation|live|lives|living|contact\s+(?:details|info|information)|"
    r"personal\s+(?:details|information|info|data)|"
    r"numeros?(?:\s+de\s+(?:telephone|portable|mobile|tel|secu(?:rite\s+sociale)?|passeport|"
    r"carte|compte))?|portable|telephone|(?:adresses?|adresse)(?:\s+(?:postale|personnelle|"
    r"privee|du\s+domicile|e-?mail|mail|electronique|exacte|ip))?|courriels?|e-?mails?|mails?|"
    r"dates?\s+de\s+naissance|anniversaires?|age|securite\s+sociale|secu|nir|passeport|carte\s+"
    r"(?:d'identite|bancaire|bleue|de\s+credit|vitale)|compte\s+bancaire|rib|iban|salaires?|"
    r"remuneration|gagne|revenus?|paie|fiche\s+de\s+paie|dossier\s+medical|maladie|maladies|"
    r"souffre|souffrent|sante|diagnostic|vih|sida|diabete|enceinte|arret\s+maladie|mots?\s+de\s+passe|"
    r"identifiants|code\s+pin|coordonnees|casier\s+judiciaire|informations\s+personnelles|"
    r"localisation|plaque\s+d'immatriculation|habite|vit|loge|reside|domicile)\b"
)
PERSON_TARGET = _c(
    r"\bpersonx\b|"
    r"\b(?:mr|mrs|ms|miss|dr|prof|sir|monsieur|madame|mme|mlle|mademoiselle|m\.)\s*\.?\s*\w+|"
    r"(?:\b(?:my|our|his|her|their|the|a|this|that|an|any|mon|ma|notre|son|sa|le|la|un|une|ce|cet|"
    rf"cette|du|au)\s+|\bl')(?:\w+\s+)?{PERSON_SINGULAR}\b|"
    r"\b(?:all|every|each|all\s+(?:the|our|of\s+the|of\s+our)|tous\s+(?:les|nos|mes)|"
    r"toutes\s+(?:les|nos|mes)|chaque|list\s+of|liste\s+des)\s+(?:\w+\s+)?"
    rf"(?:{PERSON_NOUN}|{JOB_PLURAL})\b|\b{PERSON_NOUN}s?'(?:s)?\s|"
    r"\b(?:someone|somebody|anyone|everyone|everybody|quelqu'un|tout\s+le\s+monde|"
    r"n'importe\s+qui)\b|\b(?:him|her|them|lui|elle|eux)\b|"
    r"\b(?:user|utilisateur|username|account|compte)\s+[\w.@-]{3,}"
)
"""A person other than the asker, or people in bulk."""

VALUE_SEEKING = _c(
    r"\b(?:what(?:'s|\s+is|\s+are|\s+was|\s+were)?|which|give|tell|find|look\s+up|lookup|search|"
    r"get|send|share|provide|show|list|export|dump|retrieve|track(?:\s+down)?|locate|pull\s+up|"
    r"reveal|leak|need|want|do\s+you\s+(?:have|know)|where\s+(?:does|do|did|is|are)|how\s+much\s+"
    r"(?:does|do|did|is)|when\s+(?:was|is|were)|does|did|has|is|who\s+(?:has|knows)|everything|"
    r"quel(?:le)?s?|donne|dis|trouve|cherche|envoie|liste|exporte|affiche|montre|communique|"
    r"recupere|revele|ou\s+(?:habite|vit|loge|reside|se\s+trouve|est)|combien|quand|besoin|"
    r"trouver|peux-tu|pourrais-tu|can\s+you|could\s+you|veux|voudrais|aimerais|"
    r"as-tu|l'as|avez-vous|"
    r"de\s+quelle|a-t-(?:il|elle)|est-ce\s+que)\b"
)
BENIGN_PII = _c(
    r"\b(?:how\s+(?:do|can|should|could|would|does|are|is)\s+(?:i|we|you|one|it|they|the)?\s*"
    r"(?:\w+\s+){0,3}?(?:change|update|edit|modify|reset|delete|remove|protect|store|stored|validate|"
    r"validated|handle|handled|format|formatted|encrypt|hash|collect|processed|kept|secure|"
    r"anonymi[sz]e|mask)|how\s+long|^\s*why\b|(?:according\s+to|under|in|per)\s+(?:the|our)\s+"
    r"(?:\w+\s+)?polic(?:y|ies)|polic(?:y|ies)\s+(?:on|for|about|regarding|says?)|what\s+does\s+"
    r"(?:the|our)\s+(?:\w+\s+)?polic(?:y|ies)|gdpr|rgpd|law|regulation|compliance|"
    r"retention|retained|explain|what\s+(?:is|are)\s+(?:a|an)\b|definition|format\s+of|"
    r"is\s+it\s+(?:safe|secure|okay|ok|legal|allowed|possible|wise)|est-(?:il|ce)\s+"
    r"(?:sur|securise|legal|permis|prudent)|"
    r"comment\s+(?:\w+\s+)?(?:modifier|changer|mettre\s+a\s+jour|proteger|supprimer|stocker|"
    r"conserver|gerer|valider)|combien\s+de\s+temps|^\s*pourquoi\b|selon\s+la\s+politique|"
    r"politique\s+de\s+(?:confidentialite|conservation|securite|protection)|que\s+dit)\b"
)
"""Questions about handling personal data in general, not asking for someone's."""

PII_STRONG = _c(
    r"\bwhere\s+(?:does|do|did)\s+(?:personx|someone|somebody|he|she|they|(?:my|his|her|the|your|"
    rf"our|this|that)\s+(?:\w+\s+)?{PERSON_SINGULAR}(?:'s\s+\w+)?)\s+(?:\w+\s+)?live\b|"
    r"\bou\s+(?:habite|vit|loge|reside|demeure)\s+(?:exactement\s+)?(?:personx|\w+)|"
    r"\bhow\s+much\s+(?:does|do|did)\s+(?:personx|he|she|(?:my|his|her|the|our)\s+(?:\w+\s+)?"
    rf"{PERSON_SINGULAR})"
    r"\s+(?:earn|make|get\s+paid)\b|\bcombien\s+gagne\b|"
    r"\bwhen\s+(?:was|is)\s+(?:\w+\s+){0,3}?(?:personx|(?:my|his|her|the)\s+\w+(?:'s\s+\w+)?)\s+"
    r"born\b|"
    r"\b(?:track\s+down|locate|find|trace|pinpoint)\s+(?:the\s+)?(?:current\s+|exact\s+|live\s+)?"
    r"(?:location|whereabouts|position|address)\s+of\b|"
    r"\b(?:find|dig\s+up|gather|compile|tell\s+me|give\s+me|dis-moi|donne-moi|trouve)\s+(?:out\s+)?"
    r"(?:everything|all\s+(?:the\s+)?(?:info|"
    r"information|data|details))\s+(?:you\s+can\s+)?(?:about|on)\s+personx|"
    r"\b(?:list|export|dump|give\s+me|send\s+me|show\s+me|liste|exporte|donne-moi)\b[^.?!]{0,60}?"
    r"\b(?:all|every|each|tous|toutes|chaque)\s+(?:the\s+|les\s+|nos\s+)?(?:\w+\s+)?"
    r"(?:customers?|clients?|employees?|staff|users?|members?|subscribers?|patients?|"
    r"salarie(?:e)?s|employe(?:e)?s|utilisateurs|abonne(?:e)?s|patients|personnel)\b|"
    r"\b(?:every|each)\s+(?:customer|client|employee|user|member|subscriber|patient)'s\b|"
    r"\bwho\s+(?:lives|resides|is\s+living)\s+at\b|\bqui\s+(?:habite|vit|reside)\s+(?:au|a|a\s+l')"
    r"\s*\d|\bwhose\s+(?:phone|mobile|number|e-?mail|address|car|plate)\b|\ba\s+qui\s+"
    r"(?:appartient|est)\s+(?:ce|cet|cette|le|la)\s+(?:numero|adresse|plaque|e-?mail|mail)\b|"
    r"\b(?:which|what)\s+street\s+(?:\w+\s+){0,3}?lives?\b|\bdans\s+quelle\s+rue\s+"
    r"(?:habite|vit)\b"
)
"""Forms that ask for someone's data by themselves (where X lives, what X earns, bulk exports)."""

BULK_QUESTION = _c(
    r"\b(?:who|qui)\s+(?:in|at|among|from|dans|parmi|chez)\s+(?:the|our|my|this|l'|la|le|les|nos|"
    r"notre|mon|ma)\s*(?:\w+\s+)?(?:company|team|office|department|staff|organi[sz]ation|building|"
    r"class|school|entreprise|equipe|bureau|service|societe|batiment|classe|ecole)\b|"
    r"\b(?:which|what|who|quels|quelles|lesquels|lesquelles)\s+(?:of\s+(?:the|our)\s+|(?:de|d'entre)\s+"
    rf"(?:nos|les|mes)\s+)?(?:\w+\s+)?(?:{PERSON_NOUN}|{JOB_PLURAL})\s+(?:\w+\s+)?(?:have|has|had|"
    r"suffer|suffers|are|were|take|takes|earn|earns|live|lives|ont|souffrent|sont|prennent|"
    r"gagnent|habitent|vivent)\b"
)
"""Asking which people have a trait (needs a personal-data attribute as well)."""

# --- out_of_scope: tasks that are not questions about documents --------------------------------

OUT_OF_SCOPE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("creative", _c(
        r"\b(?:write|compose|create|make\s+up|draft|generate|give\s+me|invent|craft|pen)\s+"
        r"(?:me\s+|us\s+)?(?:a|an|some|another|the)?\s*(?:\w+\s+){0,3}?(?:poems?|haikus?|"
        r"limericks?|sonnets?|songs?|lyrics|raps?|stor(?:y|ies)|short\s+stor(?:y|ies)|tales?|"
        r"fairy\s+tales?|fables?|novels?|screenplays?|verses?|ballads?|odes?|(?:love|cover|"
        r"motivation|birthday|farewell|resignation)\s+letters?|speech(?:es)?|toasts?|tweets?|"
        r"sketch(?:es)?|skits?|rap\s+battles?|dialogues?\s+between|plays?\s+about)\b|"
        r"\b(?:ecri[st]|ecrire|redige[rz]?|compose[rz]?|invente[rz]?|cree[rz]?|fais)(?:[\s-]+"
        r"(?:moi|nous))?\s+(?:un|une|des|quelques)?\s*(?:\w+\s+){0,2}?(?:poemes?|chansons?|"
        r"histoires?|contes?|fables?|haikus?|nouvelles?|romans?|raps?|vers|ballades?|"
        r"lettres?\s+(?:de\s+motivation|d'amour|de\s+demission)|discours|sketch(?:es)?|"
        r"sketchs|dialogues?|pieces?\s+de\s+theatre)\b")),
    ("recommendation", _c(
        r"\brecommend\s+(?:me\s+|us\s+)?(?:a|an|some|the\s+best)?\s*(?:\w+\s+)?(?:restaurants?|movies?|"
        r"films?|books?|songs?|bars?|hotels?|series|shows?|games?|recipes?|holiday|vacation|"
        r"destinations?)\b|\b(?:plan|organi[sz]e)\s+my\s+(?:\w+\s+)?(?:trip|vacation|holiday|"
        r"wedding|weekend|party|diet)\b|\bwhat\s+should\s+i\s+(?:eat|cook|watch|wear|read)\b|"
        r"\b(?:recommande|conseille)[\s-]+(?:moi|nous)\s+(?:un|une|des)\s+(?:\w+\s+)?(?:restaurants?|"
        r"films?|livres?|series?|bars?|hotels?|recettes?)\b|\borganise[\s-]+(?:moi\s+)?mes\s+"
        r"vacances\b|\bqu'est-ce\s+que\s+je\s+(?:mange|regarde)\b")),
    ("translation", _c(
        r"\btranslate\s+(?:this|the\s+following|these|my|that)\b|\btraduis[\s-]+(?:moi\s+)?"
        r"(?:ce|cette|ces|le\s+texte|la\s+phrase|ceci)\b")),
    ("joke", _c(
        r"\b(?:tell|give|share|know)\s+(?:me\s+|us\s+)?(?:a|an|another|some|any)?\s*(?:\w+\s+)?"
        r"jokes?\b|\bmake\s+me\s+laugh\b|\b(?:raconte|dis|donne|connais)(?:[\s-]+(?:moi|nous))?\s+"
        r"(?:une|des)\s+(?:\w+\s+)?blagues?\b|\bfais[\s-]moi\s+rire\b")),
    ("realtime", _c(
        r"\b(?:what(?:'s|\s+is)|how(?:'s|\s+is))\s+the\s+weather\s+(?:like\s+)?(?:in|at|for|"
        r"today|tomorrow|tonight|now|right\s+now|this\s+(?:week|weekend))\b|"
        r"\bweather\s+(?:forecast\s+)?(?:in|for)\s+\w+\s+(?:today|tomorrow|tonight|now|this)\b|"
        r"\bquel\s+temps\s+(?:fait-il|fera-t-il|va-t-il\s+faire)\b|"
        r"\bmeteo\s+(?:de\s+)?(?:demain|d'aujourd'hui|aujourd'hui|ce\s+soir|cette\s+semaine|du\s+"
        r"week-end)\s+(?:a|au|en|pour|sur)\b|\bweather\s+(?:be\s+)?(?:like\s+)?(?:tomorrow|today|"
        r"tonight|this\s+weekend)\s+(?:in|at)\b|"
        r"^(?!.*\b(?:accura\w+|sensors?|stations?|devices?|measur\w+|readings?|records?|data|lumen)\b)"
        r".*\bweather\b[^.?!]{0,40}?\b(?:today|tomorrow|tonight|this\s+(?:week|weekend|morning|"
        r"afternoon|evening)|next\s+week|right\s+now)\b|\bmeteo\s+(?:a|de|du|pour)\s+"
        r"\w+\s+(?:aujourd'hui|demain|ce\s+soir|cette\s+semaine)\b")),
    ("realtime", _c(
        r"\b(?:stock|share)\s+(?:price|value)|\bprice\s+of\s+(?:bitcoin|ethereum|btc|eth|gold|oil|"
        r"crypto\w*)|\b(?:bitcoin|ethereum|btc|crypto)\s+(?:price|rate|value)|\bexchange\s+rate\b|"
        r"\bcours\s+(?:de\s+)?(?:l'action|la\s+bourse|du\s+bitcoin|de\s+l'or|de\s+l'euro|du\s+"
        r"dollar)|\bprix\s+du\s+bitcoin\b|\btaux\s+de\s+change\b")),
    ("realtime", _c(
        r"\b(?:who\s+won|who\s+is\s+winning|score\s+of|final\s+score|latest\s+score|live\s+score)\b"
        r"[^.?!]{0,60}?\b(?:match|game|race|final|cup|tournament|election|fight)\b|"
        r"\b(?:today'?s|latest|breaking|current|this\s+morning'?s)\s+(?:\w+\s+)?(?:news|headlines)\b|"
        r"\b(?:qui\s+a\s+gagne|le\s+score\s+du|score\s+du)\b[^.?!]{0,60}?\b(?:match|course|finale|"
        r"election|coupe)\b|\b(?:les\s+)?(?:actualites|infos|nouvelles)\s+(?:du\s+jour|"
        r"d'aujourd'hui)\b|\bwhat\s+time\s+is\s+it\b|\bquelle\s+heure\s+est-il\b|"
        r"\bwhat(?:'s|\s+is)\s+(?:today'?s\s+date|the\s+date\s+today)\b")),
    ("opinion", _c(
        r"\b(?:what(?:'s|\s+is|\s+are)|which\s+is)\s+your\s+(?:favou?rite|personal\s+opinion|"
        r"opinion\s+(?:of|on|about)|view\s+on|take\s+on)\b|\bdo\s+you\s+(?:like|love|hate|prefer|"
        r"enjoy)\b|\bin\s+your\s+(?:personal\s+)?opinion\b|\bof\s+all\s+time\b|"
        r"\b(?:ton|ta|tes|votre|vos)\s+(?:\w+\s+)?(?:prefere(?:e)?s?|favori(?:te)?s?)\b|"
        r"\b(?:a\s+ton\s+avis|a\s+votre\s+avis|quel\s+est\s+ton\s+avis|tu\s+preferes|"
        r"tu\s+aimes)\b|\bwhat\s+do\s+you\s+(?:personally\s+)?(?:think|feel)\s+(?:about|of)\b|"
        r"\b(?:que|qu'est-ce\s+que)\s+(?:tu\s+)?pense[sz]?(?:-tu|-vous)?\s+(?:de|du|des)\b")),
    ("plan", _c(
        r"\b(?:give|make|create|write|design|build|prepare)\s+(?:me\s+|us\s+)?(?:a|an|my)\s+(?:\w+\s+)?"
        r"(?:workout|training|fitness|meal|diet|exercise|study|weight[\s-]loss)\s+(?:plan|program|"
        r"programme|routine|schedule)\b|\b(?:programme|plan|routine)\s+(?:de\s+)?(?:musculation|"
        r"sport|fitness|regime|repas|entrainement|revision)s?\b")),
    ("advice", _c(
        r"\bshould\s+i\s+(?:break\s+up|divorce|marry|dump|quit\s+my\s+(?:job|studies)|leave\s+my\s+"
        r"(?:job|wife|husband|partner|boyfriend|girlfriend)|propose|have\s+(?:a\s+)?(?:baby|kids?))\b|"
        r"\b(?:dois-je|devrais-je|est-ce\s+que\s+je\s+(?:dois|devrais))\s+(?:\w+\s+)?"
        r"(?:demissionner|quitter|divorcer|rompre|epouser|me\s+marier|larguer)\b")),
    ("investment_advice", _c(
        r"\b(?:which|what)\s+(?:stocks?|shares?|crypto\w*|coins?|funds?|etfs?)\s+should\s+(?:i|we)\s+"
        r"(?:buy|sell|invest)|\bshould\s+(?:i|we)\s+(?:buy|sell|invest\s+in)\s+(?:\w+\s+)?"
        r"(?:stocks?|shares?|bitcoin|crypto\w*|gold)\b|\b(?:quelles?|quels?)\s+(?:actions|cryptos?|"
        r"fonds)\s+(?:devrais-je|dois-je|faut-il)\s+(?:acheter|vendre)|\b(?:dois-je|devrais-je)\s+"
        r"(?:acheter|vendre|investir)\b")),
    ("prediction", _c(
        r"\b(?:who|which\s+(?:team|party|candidate|country|player))\s+will\s+win\b|"
        r"\bwill\s+(?:the\s+)?(?:stock|market|bitcoin|price)s?\s+(?:go\s+up|rise|fall|crash)\b|"
        r"\blottery\s+numbers\b|\b(?:qui|quelle\s+equipe|quel\s+candidat)\s+(?:va\s+gagner|"
        r"gagnera)\b|\bnumeros\s+du\s+loto\b")),
    ("homework", _c(
        r"\bdo\s+my\s+(?:\w+\s+)?homework\b|\b(?:essay|dissertation|assignment)\b[^.?!]{0,80}?\bfor\s+"
        r"my\s+(?:\w+\s+)?(?:class|course|teacher|professor|homework)\b|\bsolve\s+(?:these|this|"
        r"my)\s+(?:\w+\s+){0,2}?(?:exercises?|problems?|equations?)\s+for\s+me\b|"
        r"\bfais\s+mes\s+devoirs\b|\b(?:redige|ecris)[\s-]+(?:moi\s+)?(?:ma|une)\s+"
        r"(?:dissertation|redaction)\b")),
)
