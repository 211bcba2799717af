"""The advisor's words for children, in the dashboard's languages (en, fr, es, ko).

A hint is a key and its numbers (`Hint`); the words are chosen only when it
is shown, so the dashboard can show the same advice in whatever language its
switcher is on.  Every language has every key: the tests check it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

LANGUAGES = ("en", "fr", "es", "ko")
DEFAULT_LANGUAGE = "en"

# Keys ending in "_one"/"_other" are the two plural forms of one message.
TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "hope_complete": "Whoever draws the {card} finishes a snake!",
        "hope_join": "Whoever draws the {card} can join two snakes into a whole snake!",
        "complete": "This card finishes a snake: you collect {cards} cards!",
        "join_complete": "This card can join two snakes into a whole snake: you collect {cards} cards!",
        "join_two": "This card can join two snakes!",
        "fits_nowhere": "This card fits nowhere: lay it on its own.",
        "safe": "Safe: no card left lets the next player finish a snake.",
        "gives_away": "Careful: the next player has a {percent}% chance to finish a snake.",
        "last_card": "This is the last card of the game!",
        "badge_none": "no single card left completes it",
        "badge_one": "can be completed by {n} card left",
        "badge_other": "can be completed by {n} cards left",
        "cards_left_one": "{n} card left to draw",
        "cards_left_other": "{n} cards left to draw",
    },
    "fr": {
        "hope_complete": "Qui pioche {card} termine un serpent !",
        "hope_join": "Qui pioche {card} peut relier deux serpents en un serpent entier !",
        "complete": "Cette carte termine un serpent : tu gagnes {cards} cartes !",
        "join_complete": "Cette carte peut relier deux serpents en un serpent entier : "
                         "tu gagnes {cards} cartes !",
        "join_two": "Cette carte peut relier deux serpents !",
        "fits_nowhere": "Cette carte ne va nulle part : pose-la toute seule.",
        "safe": "Sans risque : aucune carte restante ne permet au joueur suivant de terminer un serpent.",
        "gives_away": "Attention : le joueur suivant a {percent} % de chances de terminer un serpent.",
        "last_card": "C'est la dernière carte de la partie !",
        "badge_none": "aucune carte restante ne le complète à elle seule",
        "badge_one": "peut être complété par {n} carte restante",
        "badge_other": "peut être complété par {n} cartes restantes",
        "cards_left_one": "{n} carte à piocher",
        "cards_left_other": "{n} cartes à piocher",
    },
    "es": {
        "hope_complete": "¡Quien robe {card} termina una serpiente!",
        "hope_join": "¡Quien robe {card} puede unir dos serpientes en una serpiente entera!",
        "complete": "¡Esta carta termina una serpiente: te llevas {cards} cartas!",
        "join_complete": "¡Esta carta puede unir dos serpientes en una serpiente entera: "
                         "te llevas {cards} cartas!",
        "join_two": "¡Esta carta puede unir dos serpientes!",
        "fits_nowhere": "Esta carta no encaja en ningún sitio: ponla sola.",
        "safe": "Sin riesgo: ninguna carta que queda deja al siguiente jugador terminar una serpiente.",
        "gives_away": "Cuidado: el siguiente jugador tiene un {percent} % de probabilidad de "
                      "terminar una serpiente.",
        "last_card": "¡Es la última carta de la partida!",
        "badge_none": "ninguna carta que queda la completa por sí sola",
        "badge_one": "se puede completar con {n} carta que queda",
        "badge_other": "se puede completar con {n} cartas que quedan",
        "cards_left_one": "queda {n} carta por robar",
        "cards_left_other": "quedan {n} cartas por robar",
    },
    "ko": {
        "hope_complete": "{card} 카드를 뽑는 사람은 뱀을 완성해요!",
        "hope_join": "{card} 카드를 뽑는 사람은 뱀 두 마리를 이어 완성할 수 있어요!",
        "complete": "이 카드로 뱀을 완성해요! 카드 {cards}장을 가져가요!",
        "join_complete": "이 카드로 뱀 두 마리를 이어 완성할 수 있어요! 카드 {cards}장을 가져가요!",
        "join_two": "이 카드는 뱀 두 마리를 이을 수 있어요!",
        "fits_nowhere": "이 카드는 붙일 곳이 없어요. 따로 놓으세요.",
        "safe": "안전해요: 남은 카드로는 다음 사람이 뱀을 완성할 수 없어요.",
        "gives_away": "조심! 다음 사람이 뱀을 완성할 확률이 {percent}%예요.",
        "last_card": "이번이 마지막 카드예요!",
        "badge_none": "남은 카드 한 장으로는 완성할 수 없어요",
        "badge_one": "남은 카드 {n}장으로 완성할 수 있어요",
        "badge_other": "남은 카드 {n}장으로 완성할 수 있어요",
        "cards_left_one": "남은 카드 {n}장",
        "cards_left_other": "남은 카드 {n}장",
    },
}


# Card names for "whoever draws ...": colour words agree with the noun in French and Spanish
# (feminine for head and tail, masculine for the middle-section).  A colour a calibrated
# deck added is shown by its own name.
COLOURS = {
    "en": {c: (c, c) for c in ("red", "orange", "yellow", "green", "blue", "purple")},
    "fr": {"red": ("rouge", "rouge"), "orange": ("orange", "orange"), "yellow": ("jaune", "jaune"),
           "green": ("verte", "vert"), "blue": ("bleue", "bleu"), "purple": ("violette", "violet")},
    "es": {"red": ("roja", "rojo"), "orange": ("naranja", "naranja"),
           "yellow": ("amarilla", "amarillo"), "green": ("verde", "verde"), "blue": ("azul", "azul"),
           "purple": ("morada", "morado")},
    "ko": {"red": ("빨강", "빨강"), "orange": ("주황", "주황"), "yellow": ("노랑", "노랑"),
           "green": ("초록", "초록"), "blue": ("파랑", "파랑"), "purple": ("보라", "보라")},
}
CARD_NAMES = {   # head, tail, middle (two colours), rainbow head, rainbow tail
    "en": ("{c} head", "{c} tail", "{a}-{b} middle", "rainbow head", "rainbow tail"),
    "fr": ("une tête {c}", "une queue {c}", "un milieu {a}-{b}", "la tête arc-en-ciel",
           "la queue arc-en-ciel"),
    "es": ("una cabeza {c}", "una cola {c}", "un cuerpo {a} y {b}", "la cabeza arcoíris",
           "la cola arcoíris"),
    "ko": ("{c} 머리", "{c} 꼬리", "{a}-{b} 몸통", "무지개 머리", "무지개 꼬리"),
}


def card_name(code: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """A card as a child would call it, from its code ("M-red-blue" -> "red-blue middle")."""
    from .cards import Card, Kind
    lang = lang if lang in CARD_NAMES else DEFAULT_LANGUAGE
    card = Card.parse(code)
    head, tail, middle, rainbow_head, rainbow_tail = CARD_NAMES[lang]

    def colour(name: str, feminine: bool) -> str:
        pair = COLOURS[lang].get(name)
        return pair[0 if feminine else 1] if pair else name
    if card.kind is Kind.HEAD:
        return head.format(c=colour(card.colours[0], True))
    if card.kind is Kind.TAIL:
        return tail.format(c=colour(card.colours[0], True))
    if card.kind is Kind.MIDDLE:
        return middle.format(a=colour(card.colours[0], False), b=colour(card.colours[1], False))
    return rainbow_head if card.kind is Kind.RAINBOW_HEAD else rainbow_tail


def _plural(lang: str, n: int) -> str:
    """CLDR's cardinal categories, reduced to what these four languages need."""
    if lang == "fr":
        return "one" if n in (0, 1) else "other"
    if lang == "ko":
        return "other"
    return "one" if n == 1 else "other"


def text(key: str, lang: str = DEFAULT_LANGUAGE, **values) -> str:
    """One message in `lang` (English for a language not offered); plural keys take `n`."""
    table = TEXTS.get(lang) or TEXTS[DEFAULT_LANGUAGE]
    if key not in table and "n" in values:
        key = f"{key}_{_plural(lang if lang in TEXTS else DEFAULT_LANGUAGE, values['n'])}"
    template = table.get(key) or TEXTS[DEFAULT_LANGUAGE][key]
    if "card" in values:
        values = dict(values, card=card_name(values["card"], lang))
    return template.format(**values)


@dataclass(frozen=True)
class Hint:
    """One piece of advice: a stable key and its values (numbers, or "card": a card code);
    `text(lang)` words it."""
    key: str
    values: Mapping[str, int | str] = field(default_factory=dict)

    def text(self, lang: str = DEFAULT_LANGUAGE) -> str:
        return text(self.key, lang, **self.values)

    def to_json(self, lang: str = DEFAULT_LANGUAGE) -> dict:
        return {"key": self.key, "values": dict(self.values), "text": self.text(lang)}


def badge(n: int, lang: str = DEFAULT_LANGUAGE) -> str:
    """The per-snake badge: "can be completed by N cards left" (N = 0 says so in words)."""
    return text("badge_none", lang) if n == 0 else text("badge", lang, n=n)


def cards_left(n: int, lang: str = DEFAULT_LANGUAGE) -> str:
    return text("cards_left", lang, n=n)
