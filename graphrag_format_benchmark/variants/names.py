"""New names and ids that look like the input's (Namer), for distractors and pseudonyms.

In: the input graph's nodes, grouped by role (type, or relation and direction on an untyped graph). Out: a fresh name
in the shape of a real name of the role (its words, script, casing), and an id in the style of its id (ID_SCHEMES).
One-word names come from real words (KIND_POOLS, a group's head words) or a character model of the role's own words
(WordModel), never a blend of two kinds. Word pools for the article's Russian graph are NAME_POOLS.
"""

from __future__ import annotations

import copy
import functools
import os
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence, Set as AbstractSet
from typing import TYPE_CHECKING, cast

from .._article import Node
from ..whole_words import leaky_markers

if TYPE_CHECKING:
    from .._article import Graph


NAME_DRAWS = 30  # draws from a vocabulary in a row that give no fresh name before it counts as spent
HELD_FOR_GOOD = 8  # times in a row a vocabulary's fresh names are all held back by the shares, with no new node of its
# type made between, before it counts as spent: the shares open only as the type grows (a hand-made graph's five
# organizations whose first words are all at their share stalled every anchor; the draws are random, so one miss is
# not proof)
WORD_MODEL_ORDER = 3  # characters of context of the word model that makes new one-word names
WORD_MODEL_MIN_WORDS = 12  # distinct words a word model needs; with fewer it would only copy them
WIDER_ROLES = 8  # an untyped node's other roles whose names may name its copy, the largest first: one vocabulary per
# role, made once and shared by every node that plays it (one per node, of all its roles' names, cost a graph of
# 6,600 nodes 200 s), and a name never blends the words of two roles
TYPE_SHARE_SLACK = 1.6  # past medium, a type may be this many times as common among new nodes as among the input's

# Names for the article's node types, used when the input names of that type are Cyrillic too, and only
# in the word counts the input's names of that type have (the article's persons are one first name each).
# None equals or extends a name of the input (checked as they are drawn). Every other role is named from
# the input's own words. A pool runs out: then the input's own words are recombined, then no name is made.
_FIRST_M = (
    "Алексей Александр Анатолий Андрей Антон Аркадий Арсений Артём Богдан Борис Вадим Валентин Валерий Василий "
    "Виктор Виталий Владимир Владислав Всеволод Вячеслав Геннадий Георгий Герман Глеб Григорий Даниил Денис "
    "Дмитрий Евгений Егор Захар Иван Игорь Илья Кирилл Константин Лев Леонид Марк Матвей Михаил Никита Николай "
    "Олег Павел Пётр Роман Руслан Святослав Семён Сергей Станислав Степан Тимофей Тимур Фёдор Филипп Юрий Ярослав"
)
_FIRST_F = (
    "Алина Алла Анастасия Ангелина Анна Валентина Валерия Варвара Вера Вероника Виктория Галина Дарья Диана Евгения "
    "Екатерина Елена Елизавета Жанна Зоя Злата Инна Карина Кира Ксения Лариса Лидия Любовь Людмила Маргарита Марина "
    "Мария Милана Надежда Наталья Нина Оксана Олеся Ольга Полина Раиса Римма Светлана Софья Таисия Тамара Ульяна Юлия "
    "Яна"
)
_SURNAMES = (
    "Белов Волков Гусев Дроздов Егоров Жуков Зайцев Козлов Лебедев Морозов Никитин Орлов Павлов Соколов "
    "Титов Фролов Чернов Щукин Яковлев Громов"
)
_ORG_WORDS = (
    "Восток Запад Юг Меридиан Прогресс Квант Логос Интеграл Алгоритм Эврика Стрела Волна Исток Рассвет Полюс Байкал "
    "Урал Енисей Алтай Аврора Горизонт Зенит Импульс Спектр Сфера Орбита Кристалл Гранит Сапфир Титан Феникс Пегас "
    "Сокол Кондор Нева Волга Ока Кама Амур Тайга Фактор Синтез Матрица Формула Модуль Контур Ресурс Потенциал"
)
_METHOD_ADJECTIVES = (
    "Локальный Глобальный Иерархический Разреженный Плотный Адаптивный Инкрементальный Вероятностный "
    "Спектральный Жадный Итеративный Рекурсивный Обратный Многоуровневый Лексический Кластерный "
    "Статистический Эвристический Комбинаторный Градиентный Линейный Нелинейный Параллельный "
    "Распределённый Стохастический Детерминированный Быстрый Точный Приближённый Марковский Байесовский"
)
NAME_POOLS = {
    "person": _FIRST_M.split()
    + _FIRST_F.split()
    + [f"{f} {s}" for f in _FIRST_M.split()[:20] for s in _SURNAMES.split()]
    + [f"{f} {s}а" for f in _FIRST_F.split()[:20] for s in _SURNAMES.split()],
    "project": (
        "Вега Сириус Альтаир Денеб Капелла Процион Регул Спика Антарес Ригель Поллукс Кастор Альдебаран Полярис "
        "Гелиос Зенит Квазар Меридиан Горизонт Импульс Спектр Сигма Омега Дельта Гамма Факел Маяк Компас Радуга "
        "Кристалл Сапфир Рубин Гранит Кварц Титан Феникс Пегас Сокол Беркут Кондор Ястреб Аргон Неон Ксенон Криптон "
        "Андромеда Аврора Арктур Беллатрикс Венера Веста Галактика Гидра Ирида Кассиопея Кентавр Лира Меркурий Нептун "
        "Орфей Персей Плутон Сатурн Юпитер Церера Эридан Янус Аполлон Гермес Прометей Икар Геракл Тесей Одиссей Ясон "
        "Кедр Клён Ясень Ольха Рябина Липа Тополь Вереск Лотос Ирис Астра Гиацинт Нарцисс Азимут Апогей Перигей "
        "Экватор Тропик Циклон Муссон Пассат Бриз Прибой Штиль Гейзер Вулкан Ледник Айсберг Каньон Фьорд Атолл Риф"
    ).split(),
    "method": [
        f"{adjective} {noun}"
        for noun in "анализ отбор индекс фильтр расчёт вывод разбор синтез обход поиск алгоритм подбор перебор спуск "
        "прогноз контроль".split()
        for adjective in _METHOD_ADJECTIVES.split()
    ],
    "organization": [
        f"{kind} {word}"
        for word in _ORG_WORDS.split()
        for kind in "Институт Центр Лаборатория Бюро Фонд Консорциум".split()
    ],
    "city": (
        "Самара Пермь Уфа Омск Тверь Тула Курск Орёл Сочи Псков Вологда Кострома Ярославль Иваново Владимир Рязань "
        "Липецк Тамбов Воронеж Саратов Пенза Ульяновск Оренбург Челябинск Тюмень Курган Барнаул Кемерово Иркутск Чита "
        "Хабаровск Владивосток Мурманск Архангельск Калуга Брянск Смоленск Новгород Петрозаводск Сыктывкар Киров "
        "Ижевск Чебоксары Саранск Астрахань Волгоград Ставрополь Краснодар Белгород Новосибирск Красноярск Якутск "
        "Абакан Ангарск Арзамас Батайск Бийск Благовещенск Братск Владикавказ Выборг Гатчина Дербент Дзержинск Елец "
        "Ессентуки Златоуст Калининград Кисловодск Коломна Котлас Магадан Магнитогорск Майкоп Махачкала Миасс Муром "
        "Нальчик Находка Нижнекамск Новокузнецк Новороссийск Норильск Обнинск Орск Печора Пятигорск Рыбинск Салехард "
        "Северодвинск Серпухов Сургут Сызрань Таганрог Тобольск Тольятти Уссурийск Ухта Череповец Черкесск Элиста "
        "Энгельс Армавир Камышин Ачинск Канск Минусинск"
    ).split(),
}
# English words a role's names may be widened with, one pool per kind of word: when the words at one position
# of a role's names (its first names, its surnames, its one-word city names, the words of its titles) are
# largely of one pool, that pool's other words may take that position too. A hand-made graph of eight people
# whose ids are their first names ('person_ana') has no first name left to give a new person; the pool does.
_GIVEN = (
    "Aaron Abby Abdul Abigail Ada Adam Adele Adrian Ahmed Aidan Aisha Alan Albert Alex Alexa Alfie Ali Alice Alicia "
    "Alma Amara Amber Amelia Amir Amy Ana Andre Andrea Andrew Angela Anita Ann Anna Anne Anton Arjun Arthur Asha Ava "
    "Ben Benjamin Bianca Bill Bob Boris Brad Brenda Brian Bruce Bruno Caleb Camila Carl Carla Carlos Carmen Carol "
    "Caroline Celia Charles Charlie Chen Chloe Chris Claire Clara Colin Connor Dan Daniel Daria David Dean Deborah "
    "Dennis Dev Diana Diego Dina Donna Dylan Ed Eden Edgar Edward Eli Elena Eliza Ella Ellen Emil Emily Emma Eric "
    "Erin Ethan Eva Evan Felix Fiona Frank Fred Gabriel Gary George Georgia Grace Greg Hana Hannah Harry Hassan "
    "Hector Helen Henry Hugo Ian Ines Ingrid Ira Iris Isaac Isabel Ivan Ivy Jack Jacob Jade James Jamie Jana Jane "
    "Jason Jay Jean Jenny Jessica Jim Joan Joe John Jonas Jorge Jose Joseph Josh Joy Juan Julia Julian June Kai "
    "Karen Karl Kate Katie Keith Ken Kenji Kevin Kim Kira Kyle Lara Lars Laura Leah Lee Leila Leo Leon Liam Lily "
    "Lina Linda Lisa Liz Logan Lola Lucas Lucy Luis Luke Luna Maria Mara Marco Marcus Maria Marie Mark Martin Mary "
    "Mason Matt Max Maya Mei Mia Michael Mike Mila Milo Mira Nadia Naomi Nate Neil Nick Nina Noah Noel Nora Olga "
    "Oliver Olivia Omar Oscar Owen Pablo Pam Paul Paula Pedro Peter Petra Phil Priya Quinn Rachel Rafael Rahul Ray "
    "Rebecca Rita Rob Robert Rosa Rose Ross Ruby Ruth Ryan Sally Sam Sara Sarah Scott Sean Simon Sofia Sophie Stella "
    "Steve Susan Tara Ted Theo Thomas Tim Tina Tom Tony Uma Valerie Vera Victor Vincent Wade Walter Will Yara Yuki "
    "Zane Zara Zoe"
)
_FAMILY = (
    "Abbott Acosta Adams Ahmed Alexander Ali Allen Alvarez Andersen Anderson Bailey Baker Banks Barnes Bauer Becker "
    "Bell Bennett Berg Bishop Black Brandt Brooks Brown Bryant Burke Burns Butler Campbell Carter Castro Chan Chavez "
    "Chen Clark Cohen Cole Coleman Collins Cook Cooper Costa Cox Cruz Dalton Davies Davis Diaz Dixon Duarte Dunn "
    "Edwards Ellis Erikson Evans Farah Ferguson Fischer Fisher Fleming Flores Ford Foster Fox Garcia Gibson Gill "
    "Gomez Gonzalez Graham Grant Gray Green Griffin Gupta Haddad Hale Hall Hamilton Hansen Harris Hart Hayes "
    "Henderson Hernandez Hill Holm Horvat Howard Hughes Hunt Ito Jackson James Jansen Jensen Johnson Jones Jordan "
    "Kane Kaur Keller Kelly Kennedy Khan Kim King Klein Knight Kowalski Kumar Lang Larsen Lee Lewis Lin Long Lopez "
    "Lund Marsh Marshall Martin Martinez Mason Meyer Miller Mills Mitchell Moore Moreau Morgan Morris Murphy "
    "Murray Nakamura Nash Nelson Nguyen Nielsen Novak Okafor Olsen Ortiz Owens Park Parker Patel Perez Pereira "
    "Perry Peters Petrov Phillips Pike Porter Powell Price Quinn Ramos Reed Reyes Reynolds Richards Rivera "
    "Roberts Robinson Rodriguez Rogers Rossi Ruiz Russell Russo Ryan Sanchez Santos Sato Schmidt Scott Shah Shaw "
    "Silva Simmons Singh Smith Stewart Stone Strand Sullivan Suzuki Tanaka Taylor Thomas Thompson Torres Tran "
    "Turner Vance Vargas Vogel Wagner Walker Walsh Ward Watson Weber Wells West White Williams Wilson Wolf Wood "
    "Wright Young Zhang Ziegler"
)
_CITIES = (
    "Aarhus Accra Adelaide Algiers Amman Amsterdam Antwerp Athens Atlanta Auckland Austin Baku Baltimore Bangkok "
    "Barcelona Basel Beijing Beirut Belfast Belgrade Bergen Berlin Bern Bogota Bologna Bordeaux Boston Bratislava "
    "Bremen Brisbane Bristol Brno Bruges Brussels Bucharest Budapest Cairo Calgary Cardiff Chicago Cologne "
    "Copenhagen Cork Dakar Dallas Delft Delhi Denver Detroit Doha Dresden Dubai Dublin Durban Edinburgh Florence "
    "Frankfurt Gdansk Geneva Genoa Ghent Glasgow Gothenburg Graz Hamburg Hanoi Havana Helsinki Houston Istanbul "
    "Jakarta Kiev Krakow Kyoto Lagos Leeds Leipzig Lille Lima Linz Lisbon Liverpool London Lyon Madrid Malmo "
    "Manchester Manila Marseille Melbourne Memphis Miami Milan Montreal Moscow Mumbai Munich Nairobi Nantes Naples "
    "Nice Osaka Oslo Ottawa Oxford Palermo Paris Perth Phoenix Portland Porto Prague Quebec Reykjavik Riga Rome "
    "Rotterdam Salzburg Santiago Seattle Seoul Seville Shanghai Singapore Sofia Stockholm Sydney Tallinn Tampere "
    "Tbilisi Tokyo Toronto Toulouse Turin Utrecht Valencia Vancouver Venice Vienna Vilnius Warsaw Zagreb Zurich"
)
_TITLE_WORDS = (
    "Amber Anchor Arrow Ash Aurora Autumn Beacon Birch Bloom Blue Bright Bridge Canyon Cedar Circle Cloud Coast "
    "Comet Copper Coral Crest Crimson Crown Dawn Delta Desert Drift Dune Dusk Echo Eclipse Ember Falcon Field Fire "
    "Flint Frost Garden Glass Golden Granite Green Grove Harbor Harvest Haven Hollow Horizon Iron Island Ivory Jade "
    "Lantern Legacy Light Lights Lumen Maple Meadow Mirror Mist Moon Nomad North Nova Oak Ocean Orbit Pacific Peak "
    "Pine Pioneer Polar Prism Quiet Radiant River Rock Royal Sage Salt Shadow Signal Silver Sky Solar Spark Spring "
    "Star Steel Stone Storm Summit Sun Swift Thunder Tide Timber Titan Trail Vertex Vista Wave West Wild Willow "
    "Wind Winter Wolf Year Apex Atlas"
)
_KIND_WORDS = (
    "Films Pictures Studios Records Labs Works Group Media Press Books Systems Partners Holdings Industries "
    "Motors Airlines Bank Foundation Institute Society Company Capital Ventures Energy Foods Games Health "
    "Software Networks Logistics Publishing Entertainment Productions Theatre Gallery Museum College University"
)
WORD_POOLS = [set(pool.split()) for pool in (_GIVEN, _FAMILY, _CITIES, _TITLE_WORDS, _KIND_WORDS)]
POOL_SHARE = 0.3  # the share of a position's distinct words a pool must hold to lend that position its other words
POOL_OWN = 10  # a graph that uses this many of a pool's words anywhere lends only those: words it never uses would
# tell its new names from its real ones (an n-gram classifier learns them)
_TRANSLIT = {
    **dict(
        zip(
            "абвгдеёжзийклмнопрстуфхцчшщыэюя",
            "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch y e yu ya".split(),
        )
    ),
    "ъ": "",
    "ь": "",
}


def slug(name: str) -> str:
    """An id fragment from a name: 'Анна Белова' -> 'anna_belova'."""
    out = "".join(_TRANSLIT.get(c, c) if not c.isascii() else c for c in name.lower())
    return "_".join("".join(c if c.isascii() and c.isalnum() else " " for c in out).split()) or "node"


def snake(name: str) -> str:
    """An id fragment that keeps the name's own script: 'Гран Тур' -> 'гран_тур'."""
    return "_".join(re.findall(r"[^\W_]+", name.lower()))


def words(name: str) -> str:
    """An id fragment that keeps the name's casing: 'Golden Gate' -> 'Golden_Gate'."""
    return "_".join(re.findall(r"[^\W_]+", name))


def underscored(name: str) -> str:
    """An id that is the name lower-cased with its spaces as underscores, punctuation kept (Freebase-derived KGs):
    'Ferdinand Georg of Saxe-Coburg-Gotha' -> 'ferdinand_georg_of_saxe-coburg-gotha'."""
    return "_".join(name.lower().split())


def spaced(name: str) -> str:
    """An id that is the name with its spaces as underscores, case and punctuation kept (catalogue designations in
    Freebase-derived KGs): '(1234) 2001 AB1' -> '(1234)_2001_AB1'."""
    return "_".join(name.split())


def verbatim(name: str) -> str:
    """An id that is the name itself, as the GraphRAG frameworks' stores key an entity: 'Leslie Lamport'."""
    return name


# how an id is made from its node's name, tried in this order
ID_SCHEMES = (
    slug,
    snake,
    words,
    underscored,
    spaced,
    verbatim,
)


SYLLABLES = "ba be bo da de do ka ke ko la le lo ma me mo na ne no ra re ro sa se so ta te to va ve vo".split()
TO_CYRILLIC = dict(zip("abdeklmnorstvBDKLMNORSTV", "абдеклмнорствБДКЛМНОРСТВ"))
FUNCTION_WORDS = frozenset(
    "a an of de von van der den du da di del della la le les el y upon on the and & zu af av bin ibn al".split()
)
UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ"  # no I and O: a catalogue's letters avoid what reads as 1 and 0


ROMAN = "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi xvii xviii xix xx".split()


def redrawn(name: str, rng: random.Random, keep: AbstractSet[str] = frozenset()) -> str:
    """A made-up name in the shape of name (name_shape), word by word: function words, honorifics, punctuation and
    what is neither letter nor digit (an emoji) kept; an ordinal another ordinal ('ii' -> 'xiv'); a year another
    year within 60 of it; a code's digits and letters redrawn by kind, no leading zero where it had none ('(1234)
    2001 AB1' -> '(5821) 1987 QK3'); any other word by syllables in its length, case and script. The last resort of
    a pseudonym: it can always be made."""
    split = name.split(" ")
    shape = name_shape(name)
    return " ".join(w if w.casefold() in keep else _redrawn_word(w, shape[k], rng) for k, w in enumerate(split))


def _redrawn_word(word: str, kind: tuple[str, str], rng: random.Random) -> str:
    if kind[0] in ("function", "honorific") or not any(c.isalnum() for c in word):
        return word
    if kind[0] == "ordinal":
        made = rng.choice(ROMAN)
        return (
            made.upper()
            if word.isupper() or word[:1].isupper() and len(word) > 1
            else made.title()
            if word[:1].isupper()
            else made
        )
    if kind[0] == "year":
        year = next(int(m) for m in re.findall(r"\d{4}", word))
        return word.replace(str(year), str(rng.randint(max(1000, year - 60), min(2099, year + 60))))
    if kind[0] == "code" or word.isupper() and sum(c.isalpha() for c in word) <= 4:
        chars = []
        for k, c in enumerate(word):
            if c.isdigit():
                chars.append(
                    rng.choice("123456789" if (k == 0 or not word[k - 1].isdigit()) and c != "0" else "0123456789")
                )
            else:
                chars.append(
                    rng.choice(UPPER)
                    if c.isupper()
                    else rng.choice(UPPER).lower()
                    if c.isalpha() and c.isascii()
                    else c
                )
        return "".join(chars)
    letters = sum(c.isalpha() for c in word)
    made = "".join(rng.choice(SYLLABLES) for _ in range(max(1, (letters + 1) // 2)))
    made = made.upper() if word.isupper() else made.title() if word[:1].isupper() else made
    made = "".join(TO_CYRILLIC.get(c, c) for c in made) if script(word) == "CYRILLIC" else made
    first = next(k for k, c in enumerate(word) if c.isalnum())
    last = max(k for k, c in enumerate(word) if c.isalnum())
    return word[:first] + made + word[last + 1 :]


def script(text: str) -> str:
    """The script of a text's first letter: 'Kazan' -> 'LATIN', 'Казань' -> 'CYRILLIC', '42' -> ''."""
    letter = next((c for c in text if c.isalpha()), None)
    return unicodedata.name(letter, "OTHER ?").split()[0] if letter else ""


def _first_word(name: str) -> str:
    return name.split(" ", 1)[0].casefold()


def word_shape(word: str) -> tuple[str, str]:
    """How a word looks, not what it says: ('title', ','), ('lower', ''), ('upper', '-')..."""
    letters = "".join(c for c in word if c.isalpha())
    case = (
        "lower"
        if letters.islower()
        else "upper"
        if letters.isupper() and len(letters) > 1
        else "title"
        if letters[:1].isupper()
        else "other"
    )
    return case, "".join(c for c in word[-1:] if not c.isalnum())


PARTICLES = frozenset("de von van der den du da di del della la le zu af av bin ibn al".split())  # before a surname
KEPT = ("function", "honorific")  # word classes a new name keeps as they are, in their place
HONORIFICS = frozenset(
    (
        "sir saint st st. lord lady dame king queen prince princess duke duchess duc count countess earl baron "
        "baroness emperor empress pope tsar sultan dr dr. mr mr. mrs mrs. ms ms. general president archduke "
        "marquis marquess viscount sheikh emir shah rabbi captain colonel admiral"
    ).split()
)
_ROMAN = re.compile(r"x{0,3}(?:ix|iv|v?i{0,3})", re.IGNORECASE)  # I to XXXIX: the ordinals of monarchs and sequels
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)


def titles_of(split: list[str]) -> int:
    """How many words a name of several words begins with that are honorifics: 2 for 'Sir King Bob', 0 for 'Carol King'
    (a surname) and for 'King' alone."""
    k = next((j for j, w in enumerate(split) if w.casefold().strip(",;:()[]\"'") not in HONORIFICS), len(split))
    return min(k, len(split) - 1)


def kept_words(name: str) -> set[str]:
    """The words (folded) of a name that a new name in its shape keeps: its function words and leading honorifics."""
    split = name.split(" ")
    return {w.casefold() for w in split if w.casefold() in FUNCTION_WORDS} | {
        w.casefold() for w in split[: titles_of(split)]
    }


def word_class(word: str, first: bool = False, title: bool = False) -> tuple[str, str]:
    """What a word is in a name, for drawing another in its place: a function word or an honorific (title: one of the
    name's leading titles, titles_of) is itself (('function', 'of'), ('honorific', 'Sir')), to be kept; an ordinal
    ('ii', 'xiv', '3rd'; never a name's first word), a year ('1998', '(1998)') or a code ('AB1', '(1234)': its letters
    and digits by kind) is of its class; any other word has its word_shape ('title', ',')."""
    folded = word.casefold()
    bare = folded.strip(",;:()[]\"'")
    if folded in FUNCTION_WORDS:
        return "function", word
    if title:
        return "honorific", word
    if bare and not first and (_ROMAN.fullmatch(bare) or _ORDINAL.fullmatch(bare)):
        return "ordinal", word_shape(word)[0]
    if len(bare) == 4 and bare.isdigit() and 1000 <= int(bare) <= 2099:
        return "year", re.sub(r"\d", "9", word)
    if any(c.isdigit() for c in word):
        return "code", re.sub(r"[A-Z]+", "A", re.sub(r"[a-z]+", "a", re.sub(r"\d+", "9", word)))
    return word_shape(word)


@functools.lru_cache(maxsize=1 << 16)  # a pseudonym's draws read the shape of the name they replace, 30 times and more
def name_shape(name: str) -> tuple[tuple[str, str], ...]:
    """The classes of a name's words, in order (word_class): 'Maria II of Portugal' -> (('title', ''), ('ordinal',
    'upper'), ('function', 'of'), ('title', ''))."""
    split = name.split(" ")
    titles = titles_of(split)
    return tuple(word_class(w, k == 0 and len(split) > 1, k < titles) for k, w in enumerate(split))


def position_role(
    split: list[str], k: int, kind: tuple[str, str] = ("", ""), particles: bool = True, titles: int | None = None
) -> str:
    """Where a word stands in its name, for names of other shapes to lend their words: 'after of' (the word after a
    function word: a place in 'Maria of Portugal'), 'first', 'last', 'middle', or 'only'; 'any' for an honorific,
    an ordinal, a year or a code (kind, its word_class), which stand for the same wherever they are. Without
    particles, a word after a surname's particle ('de', 'van') is read as where it stands ('last')."""
    if kind[0] in ("honorific", "ordinal", "year", "code"):
        return "any"
    if k and split[k - 1].casefold() in FUNCTION_WORDS and (particles or split[k - 1].casefold() not in PARTICLES):
        return f"after {split[k - 1].casefold()}"
    titles = titles_of(split) if titles is None else titles  # 'queen anne boleyn': 'anne' stands first
    k, n = k - titles, len(split) - titles
    return "only" if n == 1 else "first" if k == 0 else "last" if k == n - 1 else "middle"


def _has_digit(name: str) -> bool:
    return any(c.isdigit() for c in name)


class WordModel:
    """A character model of a role's one-word names, which draws new words with the same letter sequences:
    trained on 'Springton', 'Oakville', 'Brookdale'... it may draw 'Oakton' or 'Springdale'."""

    def __init__(self, words: list[str]) -> None:
        self.words = set(words)
        self.next: dict[str, list[str]] = {}  # the last WORD_MODEL_ORDER characters -> the characters that follow them
        k = WORD_MODEL_ORDER
        for word in sorted(self.words):
            padded = "\x02" * k + word + "\x03"
            for i in range(len(word) + 1):
                self.next.setdefault(padded[i : i + k], []).append(padded[i + k])
        lengths = sorted(len(w) for w in self.words)
        self.shortest, self.longest = lengths[0], lengths[-1]

    def draw(self, rng: random.Random) -> str | None:
        context, out = "\x02" * WORD_MODEL_ORDER, cast(list[str], [])
        while len(out) <= self.longest:
            c = rng.choice(self.next[context])
            if c == "\x03":
                word = "".join(out)
                return word if self.shortest <= len(word) and word not in self.words else None
            out.append(c)
            context = context[1:] + c
        return None


# Word pools of a role's kind, for an untyped graph whose one-word names cannot be varied from its own names (five
# countries give no sixth): a role is of a kind when at least half of its names are in that kind's pool (case aside),
# and its new one-word names (distractors) and pseudonyms are then other words of the pool, in its names' case, so
# that a country stays a country and a profession a profession (never a surname, never a made-up blend).
KIND_POOLS = {
    "country": (
        "albania algeria andorra angola argentina armenia australia austria azerbaijan bahrain bangladesh belarus "
        "belgium bolivia botswana brazil bulgaria cambodia cameroon canada chile china colombia croatia cuba cyprus "
        "denmark ecuador egypt eritrea estonia ethiopia finland france gabon georgia germany ghana greece guatemala "
        "honduras hungary iceland india indonesia iran iraq ireland israel italy jamaica japan jordan kazakhstan kenya "
        "kuwait latvia lebanon liberia libya lithuania luxembourg madagascar malawi malaysia mali malta mexico moldova "
        "monaco mongolia montenegro morocco mozambique namibia nepal netherlands nicaragua niger nigeria norway oman "
        "pakistan panama paraguay peru philippines poland portugal qatar romania russia rwanda scotland senegal serbia "
        "singapore slovakia slovenia somalia spain sudan sweden switzerland syria taiwan tanzania thailand tunisia "
        "turkey "
        "uganda ukraine uruguay uzbekistan venezuela vietnam wales yemen zambia zimbabwe"
    ).split(),
    "profession": (
        "accountant actor actress architect artist astronaut astronomer athlete author baker banker biologist "
        "bishop boxer cartoonist chef chemist choreographer cinematographer comedian composer conductor dancer "
        "designer diplomat director economist editor engineer entrepreneur explorer farmer film_producer "
        "footballer geographer historian illustrator inventor journalist judge lawyer librarian linguist "
        "lyricist mathematician merchant military_officer missionary model monk musician novelist nurse painter "
        "philanthropist philosopher photographer physician physicist pianist pilot playwright poet politician "
        "priest professor psychologist publisher rapper scientist screenwriter sculptor singer soldier sociologist "
        "songwriter statesman surgeon teacher theologian translator violinist writer"
    )
    .replace("_", " ")
    .split(" "),
    "language": (
        "albanian arabic armenian basque bengali bulgarian catalan chinese croatian czech danish dutch english "
        "estonian finnish french georgian german greek hebrew hindi hungarian icelandic indonesian irish italian "
        "japanese korean latin latvian lithuanian malay norwegian persian polish portuguese romanian russian serbian "
        "slovak slovene spanish swahili swedish tamil thai turkish ukrainian urdu vietnamese welsh yiddish"
    ).split(),
}


def role_kind(names: list[str]) -> str | None:
    """The kind (KIND_POOLS) at least half of a role's names are words of, or None: ['portugal', 'france', 'narnia'] ->
    'country'."""
    folded = [n.casefold() for n in names]
    for kind, pool in KIND_POOLS.items():
        known = set(pool)
        if folded and 2 * sum(n in known for n in folded) >= len(folded):
            return kind
    return None


# Values of a small closed class, which a pseudonym keeps as they are: a month, a weekday, a gender, a profession or
# a language names no one, and any other value of its class would be a real one of the graph swapped in (a
# counterfactual: 'October' read as 'September'). The entities beside them are renamed, so a kept value gives a model
# nothing to answer from memory. Numbers (years) are kept too (closed_value).
CLOSED_CLASSES = {
    "month": (
        "january february march april may june july august september october november december "
        "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь"
    ).split(),
    "weekday": (
        "monday tuesday wednesday thursday friday saturday sunday "
        "понедельник вторник среда четверг пятница суббота воскресенье"
    ).split(),
    "gender": "male female man woman men women non-binary nonbinary intersex transgender мужской женский мужчина "
    "женщина".split(),
    "profession": KIND_POOLS["profession"],
    "language": KIND_POOLS["language"],
}
_CLOSED = {word: kind for kind, pool in CLOSED_CLASSES.items() for word in pool}


def closed_value(name: str) -> str | None:
    """The closed class (CLOSED_CLASSES; 'number', 'letter', 'symbol') a one-word name is a value of, or None:
    'October' -> 'month', '1987' -> 'number', 'B' -> 'letter' (a grade), '♥ ♥' -> 'symbol', 'France' -> None."""
    if name.isdecimal() and name.isascii():
        return "number"
    if len(name.strip()) == 1 and name.strip().isalpha():
        return "letter"
    if name.strip() and not any(c.isalnum() for c in name):
        return "symbol"
    return _CLOSED.get(name.casefold()) if " " not in name.strip() else None


def in_case_of(word: str, like: str) -> str:
    """word in the case style of like: ('belgium', 'Portugal') -> 'Belgium'; ('belgium', 'PORTUGAL') -> 'BELGIUM'."""
    return word.upper() if like.isupper() else word.title() if like.istitle() else word


HEAD_WORD_SHARE = 0.02  # a word in more than this share of a group's names is a function word ('of', 'van'), no head


# a word in this share of a group's names of several words, and in this many, is common
COMMON_SHARE, COMMON_MIN = (
    0.1,
    4,
)


def common_words(names: list[str]) -> set[str]:
    """The words (folded) that stand in many of a group's names of several words (COMMON_SHARE of them, COMMON_MIN at
    least): 'university', 'cathedral', 'records', 'new', 'france' after 'of'. They say what kind of thing a name
    is, not which one: a pseudonym keeps them in their place ('university of tenna' -> 'university of zelarino')."""
    several = [n for n in names if " " in n.strip()]
    counts = Counter(w for n in several for w in {w.casefold() for w in n.split(" ")})
    return {w for w, k in counts.items() if k >= max(COMMON_MIN, COMMON_SHARE * len(several))}


def head_words(names: list[str]) -> list[str]:
    """Real one-word names for a group whose one-word names are in use: the last words (the head of an English
    noun phrase: 'chartered accountant' -> 'accountant', 'saint petersburg' -> 'petersburg') of its names of
    several words, of four letters or more and in at most HEAD_WORD_SHARE of its names; sorted."""
    counts = Counter(w.casefold() for n in names for w in set(n.split(" ")))
    limit = max(HEAD_WORD_SHARE * len(names), 1)
    return sorted(
        {
            n.split(" ")[-1]
            for n in names
            if " " in n
            and len(n.split(" ")[-1]) >= 4
            and sum(c.isalpha() for c in n.split(" ")[-1]) >= 4
            and counts[n.split(" ")[-1].casefold()] <= limit
        }
    )


def name_words(names: list[str]) -> list[str]:
    """Real words for a group's one-word names once its head words are spent: any word of its names of several words
    but the last, held to head_words' rules (four letters or more, in at most HEAD_WORD_SHARE of its names, no
    function word): 'the silent heat' lends 'silent'; sorted."""
    counts = Counter(w.casefold() for n in names for w in set(n.split(" ")))
    limit = max(HEAD_WORD_SHARE * len(names), 1)
    return sorted(
        {
            w
            for n in names
            if " " in n
            for w in n.split(" ")[:-1]
            if len(w) >= 4 and w.isalpha() and w.casefold() not in FUNCTION_WORDS and counts[w.casefold()] <= limit
        }
    )


class Vocabulary:
    """The names of one role, and new names made of them: a real name picked as the template (so shapes are as
    common as in the input), each of its words replaced by the word at the same position of another name of the
    same shape, that is the same number of words, each cased and punctuated alike ('Golden Gate Bridge', 'Tower
    Hill Park' may give 'Tower Gate Bridge'; 'North of Nowhere' mixes only with names like it); a one-word name by
    a WordModel of the role's one-word names. No digit or word comes in that the role's names lack."""

    def __init__(
        self,
        names: list[str],
        graph_words: frozenset[str] = frozenset(),
        real_words: bool = False,
        kind_words: bool = True,
    ) -> None:
        self.names = sorted(n for n in set(names) if any(c.isalnum() for c in n))  # a name like "." carries no words
        # shape of a name -> the words at each position, over its names
        self.slots: dict[tuple[tuple[str, str], ...], list[list[str]]] = {}
        self.templates: list[list[list[str]] | None] = []  # per name: the slots of its shape, None for one word
        # (class, position role) -> the words there, over the names of several words
        self.positions: dict[tuple[tuple[str, str], str], list[str]] = {}
        self.decks: dict[int, list[str]] = {}  # id of a list of words -> what is left of its shuffled copy (_pick)
        self.distinct: dict[int, list[str]] = {}  # id of a list of words -> its distinct words, sorted (_pick)
        for name in self.names:
            split = name.split(" ")
            shape, titles = name_shape(name), titles_of(split)
            slots = self.slots.setdefault(shape, [[] for _ in split])
            for k, word in enumerate(split):
                slots[k].append(word)
                if len(split) > 1 and shape[k][0] not in KEPT:
                    role = position_role(split, k, shape[k], titles=titles)
                    self.positions.setdefault((shape[k], role), []).append(word)
                    if role != position_role(split, k, shape[k], particles=False, titles=titles):  # 'de gaulle' lends
                        self.positions.setdefault((shape[k], "last"), []).append(word)  # its surname to surnames
            self.templates.append(slots if len(split) > 1 else None)
        single = [w for shape, slots in self.slots.items() if len(shape) == 1 for w in slots[0]]
        self.model = WordModel(single) if len(single) >= WORD_MODEL_MIN_WORDS else None
        for shape, slots in self.slots.items():  # widened by the pool most of a position's words come from
            lent: list[set[str]] = []  # pools lent to earlier positions: a first name's pool is not a surname's
            for k, slot in enumerate(slots):
                slots[k] = slot + _pool_words(slot, shape[k], lent, graph_words)
        self.single = [w for shape, slots in self.slots.items() if len(shape) == 1 for w in slots[0]]
        if len(self.single) > len(single):  # a pool lends one-word names real words: drawn as they are, not modelled
            self.model = None
        # Untyped, or where the word model would draw: a one-word name is a real word of the kind (KIND_POOLS) or a
        # head word of the names of several words, never the word model's blend ('mozambodia', 'Freedland')
        self.real_words = bool(single) and (real_words or self.model is not None)
        if self.real_words:
            kind = role_kind(self.names) if kind_words else None  # a pseudonym: no real country for a real one
            self.single = sorted({*head_words(self.names), *(KIND_POOLS[kind] if kind else ())})
            self.model = None

    def draw(
        self,
        rng: random.Random,
        like: str | None = None,
        wider: bool = False,
        avoid: AbstractSet[str] = frozenset(),
        keep: AbstractSet[str] = frozenset(),
    ) -> str | None:
        """A new name: in the shape of a real name drawn as the template, or with like, in like's shape: each word
        from the words at its position of the names of that shape; wider, or when no other name has like's
        shape, from the words of its class at the same place in any name (positions: a word after 'of' from words
        after 'of', a first word from first words); function words, honorifics and like's words in keep (folded:
        its group's common words, 'university') stay in their place; never a word of avoid (folded). None when a
        place has no word."""
        shape = name_shape(like) if like is not None else None
        split = like.split(" ") if like is not None else []
        kept = [shape[k][0] in KEPT or w.casefold() in keep for k, w in enumerate(split)] if shape is not None else []
        if shape is not None and len(shape) > 1 and (wider or len(self.slots.get(shape, [[]])[0]) < 2):
            drawn = [w if kept[k] else self._place(rng, split, k, shape[k], avoid) for k, w in enumerate(split)]
            return " ".join(drawn) if all(drawn) else None
        if shape is not None and shape in self.slots:
            slots = self.slots[shape] if len(shape) > 1 else None
        elif shape is not None and len(shape) > 1:
            return None  # no name of like's shape and no word for one of its places: never another shape
        elif shape is not None:
            slots = None  # a one-word name of a shape no name of the role has: a one-word name all the same
        else:
            slots = rng.choice(self.templates)  # a real name as the template: its shape's slots
        if slots is None:
            if self.model:
                return self.model.draw(rng)
            if not self.single:
                return None
            word = rng.choice(self.single)  # a pool's word, or a name in use (drawn again); a kind's words come
            # lower-case: in the names' case
            return in_case_of(word, like or self.names[0]) if self.real_words else word
        drawn = [
            split[k] if kept and kept[k] else _pick(rng, words, avoid, self._deck(words, like), self._distinct(words))
            for k, words in enumerate(slots)
        ]
        return " ".join(drawn) if all(drawn) else None

    def _place(
        self, rng: random.Random, split: list[str], k: int, kind: tuple[str, str], avoid: AbstractSet[str]
    ) -> str:
        """A word for place k of a name: of its class at the same place in any name of the role; after a surname's
        particle, from any surname when those after particles are spent ('de gaulle' may take 'curie')."""
        role = position_role(split, k, kind)
        words = self.positions.get((kind, role), [])
        word = _pick(rng, words, avoid, self._deck(words, split), self._distinct(words))
        if not word and role != (plain := position_role(split, k, kind, particles=False)):
            words = self.positions.get((kind, plain), [])
            word = _pick(rng, words, avoid, self._deck(words, split), self._distinct(words))
        return word

    def _distinct(self, words: list[str]) -> list[str]:
        """words' distinct words, sorted: made once per list (a place's 5,000 words sorted per draw cost minutes)."""
        key = id(words)
        if key not in self.distinct:
            self.distinct[key] = sorted(set(words))
        return self.distinct[key]

    def _deck(self, words: list[str], like: object) -> list[str] | None:
        """The deck words are dealt from when a name is drawn in the shape of another (like: pseudonyms), else None."""
        return None if like is None else self.decks.setdefault(id(words), [])


PICKS = 3  # draws from a place's words, as common as they are among the names, before one among the others of avoid


def _pick(
    rng: random.Random,
    words: list[str],
    avoid: AbstractSet[str],
    deck: list[str] | None = None,
    distinct: list[str] | None = None,
) -> str:
    """A word of words, as common as it is there, that is not in avoid (folded); '' when every one is: a few draws,
    then one among the distinct words left (distinct: words' distinct words, sorted), so that a place where one
    word stands in most names ('john', in 5,000 names that begin with it) still gives one of its other words in
    bounded time. With a deck (pseudonyms), the words are dealt from a shuffled copy of words, refilled when
    empty: each comes as often as it stands there (a real name's 'ciampi' stands in one pseudonym, not in five)."""
    if deck is not None and words:
        if not deck:
            deck.extend(rng.sample(words, len(words)))
        k = next(
            (k for k in range(len(deck) - 1, max(len(deck) - 1 - PICKS, -1), -1) if deck[k].casefold() not in avoid),
            None,
        )
        if k is not None:
            return deck.pop(k)
    for _ in range(PICKS if words else 0):
        word = rng.choice(words)
        if word.casefold() not in avoid:
            return word
    if not words or not avoid:
        return ""
    left = [w for w in (distinct if distinct is not None else sorted(set(words))) if w.casefold() not in avoid]
    return rng.choice(left) if left else ""


def _pool_words(
    slot: list[str], shape: tuple[str, str], lent: list[set[str]], graph_words: frozenset[str]
) -> list[str]:
    """The words a word pool lends one position of a role's names: those of the pool, not lent to an earlier
    position, that holds the most of the position's distinct words, at least two and POOL_SHARE of them (only the
    ones the graph uses anywhere, when it uses POOL_OWN of them or more); none for words of another case or with
    punctuation. The pool is added to lent."""
    distinct = set(slot)
    if shape != ("title", "") or len(distinct) < 2:
        return []
    best = max((pool for pool in WORD_POOLS if pool not in lent), key=lambda pool: len(distinct & pool), default=set())
    if len(distinct & best) < 2 or len(distinct & best) < POOL_SHARE * len(distinct):
        return []
    lent.append(best)
    own = best & graph_words
    return sorted((own if len(own) >= POOL_OWN else best) - distinct)


class Namer:
    """New names and ids that look like the input's: the words, script, casing and id shape of the names of
    the same role (the node's type on a typed graph; on an untyped one, the names at the same end of the
    relation, then those of every role the copied node plays). When a role's names run out, no name is made
    (new_node returns None) rather than a numbered or blended one that a model could tell apart."""

    def __init__(self, graph: Graph, rng: random.Random, kinds: dict[str, str] | None = None) -> None:
        self.rng = rng
        # node id -> its kind where the input holds one its formats do not show (a store read as sent)
        self.kinds = kinds or {}
        self.names = {n.name.casefold() for n in graph.nodes}  # every name in use, folded
        self.input_names = set(self.names)
        self.graph_words = frozenset(w for n in graph.nodes for w in n.name.split(" "))
        self.ids = {n.id for n in graph.nodes}  # every id in use
        self.nodes = {n.id: n for n in graph.nodes}
        self.typed = len({self.kinds.get(n.id, n.type) for n in graph.nodes}) > 1
        self.role_names: dict[tuple[str, str], list[str]] = {}  # (relation, "out"|"in") -> names at that end
        self.roles_of: dict[str, set[tuple[str, str]]] = {}  # node id -> the roles it plays
        for e in graph.edges:
            for role, end in (((e.relation, "out"), e.target), ((e.relation, "in"), e.source)):
                self.role_names.setdefault(role, []).append(self.nodes[end].name)
                self.roles_of.setdefault(end, set()).add(role)
        self.type_names: dict[str, list[str]] = {}  # a node's kind (kind_of) -> the names of its nodes
        for n in graph.nodes:
            self.type_names.setdefault(self.kinds.get(n.id, n.type), []).append(n.name)
        self.vocabularies: dict[object, Vocabulary] = {}  # never changed once made: forks share them
        self.spent: set[object] = set()  # keys of the vocabularies that gave no fresh name in NAME_DRAWS draws
        # key -> (new nodes of its type, times in a row) when its fresh names were all held back
        self.held_made: dict[object, tuple[int, int]] = {}
        self.id_prefix = os.path.commonprefix(sorted(self.ids)[:1] + sorted(self.ids)[-1:]) if len(self.ids) > 1 else ""
        self.heads = Counter(i.split("_", 1)[0] for i in self.ids if "_" in i)  # first words that prefix several ids
        made = Counter(k for n in graph.nodes for k, make in enumerate(ID_SCHEMES) if make(n.name) == n.id)
        # the graph's own scheme first
        self.id_schemes = sorted(ID_SCHEMES, key=lambda make: -made[ID_SCHEMES.index(make)])
        # each distinct character once, not each of every id
        chars = set().union(*map(set, self.ids)) if self.ids else set()
        self.id_chars = {
            kind: sorted(c for c in chars if self._kind(c) == kind) for kind in ("lower", "upper", "digit")
        }
        self.pools = {}
        for t, pool in sorted(NAME_POOLS.items()):
            mine = self.type_names.get(t, [])
            if mine and Counter(map(script, mine)).most_common(1)[0][0] == "CYRILLIC":
                lengths = {len(n.split(" ")) for n in mine}
                self.pools[t] = rng.sample(
                    [p for p in pool if len(p.split(" ")) in lengths],
                    len([p for p in pool if len(p.split(" ")) in lengths]),
                )
        self.pool_position: dict[str, int] = {}
        self.unnamed: Counter[str] = Counter()  # role description -> nodes that could not be named
        self.fallbacks: Counter[str] = Counter()  # what a name or id could not keep -> times: reported by the run
        self.held = False  # the last new_node made none because a share was full, not because names are spent
        self.holds_input: Held | None = None  # with_pseudonyms: no new name may hold an input name of several words
        # with_pseudonyms: words (folded) the new name may not have: those of the name it replaces
        self.avoid: set[str] = set()
        self.keep: set[str] = set()  # with_pseudonyms: words (folded) of the name it replaces that stay in their place
        self.keep_shape = (
            False  # with_pseudonyms: a new name has the shape of the name it replaces (words, case, punctuation)
        )
        self.kind_words = True  # one-word names may be words of their kind's pool (KIND_POOLS); not for pseudonyms
        self.replacing: list[str] = []  # with_pseudonyms: the words (folded) of the name being replaced
        self.type_slack = TYPE_SHARE_SLACK
        # No first word (and no digit) may be more common among a type's new names than among its real ones.
        self.real_marks = {
            t: (Counter(_first_word(n) for n in names), sum(map(_has_digit, names)), len(names))
            for t, names in self.type_names.items()
        }
        self.made_marks: dict[str, tuple[Counter[str], list[int]]] = {t: (Counter(), [0, 0]) for t in self.type_names}

    def fork(self, rng: random.Random) -> Namer:
        """A namer that starts from this one's state and makes its own choices: it shares what never changes (the
        input's roles and names, the vocabularies made so far) and has its own names and ids in use, spent
        vocabularies, pools and counts. One per context, forked from a namer of the whole input graph, costs a
        copy instead of reading the whole graph again."""
        other = copy.copy(self)
        other.rng, other.names, other.ids, other.spent = rng, set(self.names), set(self.ids), set(self.spent)
        other.pools = {t: list(pool) for t, pool in self.pools.items()}
        other.pool_position, other.unnamed, other.held, other.fallbacks = (
            dict(self.pool_position),
            Counter(),
            False,
            Counter(),
        )
        other.made_marks = {t: (Counter(), [0, 0]) for t in self.type_names}
        return other

    @staticmethod
    def _kind(c: str) -> str:
        return "digit" if c.isdigit() else "upper" if c.isupper() else "lower" if c.isalpha() else "other"

    def _vocabularies(self, like: Node, role: tuple[str, str]) -> list[tuple[object, list[str]]]:
        """(key, names) of the roles to name a copy of like from: its own, then (untyped) the others it plays."""
        if self.typed:
            return [(("type", like.type), self.type_names[like.type])]
        if role[0] == "group":  # a pseudonym's group (Pseudonyms): its relations' names are of the group already
            return [(role, self.role_names.get(role, []))]
        wider = sorted(self.roles_of.get(like.id, set()) - {role}, key=lambda r: (-len(self.role_names[r]), r))[
            :WIDER_ROLES
        ]
        return [(role, self.role_names.get(role, [])), *((r, self.role_names[r]) for r in wider)]

    def new_node(self, like: Node, role: tuple[str, str]) -> Node | None:
        """A node that plays the role of the input node like (reached over role = (relation, direction)), or None:
        when the names of its role are spent, or (self.held) when its type or the names it could take are
        as common among the new nodes as they may be for now. A node of a kind its type does not show (kinds) is
        named as a node of that kind and typed as like is."""
        kind = self.kinds.get(like.id)
        if kind is None or kind == like.type:
            return self._new_node(like, role)
        node = self._new_node(like._replace(type=kind), role)
        return node._replace(type=like.type) if node is not None else None

    def _new_node(self, like: Node, role: tuple[str, str]) -> Node | None:
        self.held = not self._type_has_room(like.type)
        if self.held:
            return None
        if like.type in self.pools:
            node = self._from_pool(like)
            if node is not None:
                return node
        for key, names in self._vocabularies(like, role):
            vocabulary = self.vocabularies.get(key) or self.vocabularies.setdefault(
                key, Vocabulary(names, self.graph_words, not self.typed, self.kind_words)
            )
            misses = held_back = 0
            while key not in self.spent and vocabulary.names and misses < NAME_DRAWS:
                name = vocabulary.draw(
                    self.rng, like.name if self.keep_shape else None, misses >= NAME_DRAWS // 2, self.avoid, self.keep
                )
                if name is not None and self._fresh(name):
                    if not self._within_shares(like.type, name):
                        held_back += 1  # fresh, but its first word is common enough already: it may come later
                    else:
                        node = self._named(like, name)
                        if node is not None:
                            return node
                misses += 1
            if held_back:  # held back for now; but the shares open only as the type gets new nodes: held back
                made = self.made_marks[like.type][1][0]  # HELD_FOR_GOOD times in a row with none made, this draw
                last, times = self.held_made.get(key, (None, 0))  # names no node (not held: the branch takes other
                times = times + 1 if last == made else 1  # steps or its anchor gives up), and the vocabulary stays
                self.held_made[key] = (made, times)  # for when the type grows
                if times >= HELD_FOR_GOOD:
                    continue
            elif not self.keep_shape:  # a pseudonym's draws depend on the name it replaces: one miss spends nothing
                self.spent.add(key)
            self.held = self.held or bool(held_back)
        if not self.held:
            self.unnamed[f"type {like.type}" if self.typed else f"like {like.id}"] += 1
        return None

    def _type_has_room(self, node_type: str) -> bool:
        """The type is less common among the new nodes than type_slack times its share of the input's (one over)."""
        made = self.made_marks[node_type][1][0]
        all_made = sum(counts[0] for _, counts in self.made_marks.values())
        return made + 1 <= self.type_slack * self.real_marks[node_type][2] / len(self.nodes) * (all_made + 1) + 1

    def _from_pool(self, like: Node) -> Node | None:
        """The next name of the type's pool that is fresh and within the shares (looked for among the next
        NAME_DRAWS), moved to the head of what is left of the pool and taken."""
        pool, k = self.pools[like.type], self.pool_position.get(like.type, 0)
        while k < len(pool) and not self._fresh(pool[k]):
            k += 1
        self.pool_position[like.type] = k
        words = len(like.name.split(" "))
        for j in range(k, min(k + NAME_DRAWS, len(pool))):
            fits = (
                self._fresh(pool[j])
                and self._within_shares(like.type, pool[j])
                and (not self.keep_shape or len(pool[j].split(" ")) == words)
            )
            node = self._named(like, pool[j]) if fits else None
            if node is not None:
                pool[k], pool[j] = pool[j], pool[k]
                self.pool_position[like.type] = k + 1
                return node
        return None

    def _named(self, like: Node, name: str, forced: bool = False, namesake: bool = False) -> Node | None:
        """The node named name, with an id in like's style, or None when no such id is free (forced: any free id,
        _forced_id; namesake: a second entity of that name, whose id with a number added is the graph's own style)."""
        for longer in range(1 if forced else 4):
            node_id = self._forced_id(like, name, not namesake) if forced else self._id(like, name, longer)
            if node_id is not None:
                self.names.add(name.casefold())
                self.ids.add(node_id)
                firsts, counts = self.made_marks[like.type]
                firsts[_first_word(name)] += 1
                counts[0] += 1
                counts[1] += _has_digit(name)
                return Node(node_id, name, like.type)
        return None

    def _forced_id(self, like: Node, name: str, counted: bool = True) -> str:
        """An id for name that is free whatever ids are in use: one in like's style if any is (_id), else the name in
        the graph's own id scheme, with '_2', '_3'... until free (counted in fallbacks, unless not counted)."""
        for longer in range(4):
            node_id = self._id(like, name, longer)
            if node_id is not None:
                return node_id
        if counted:
            self.fallbacks[
                "ids in the graph's scheme with a number added (no id in the style of the one it replaces was free)"
            ] += 1
        base = self.id_schemes[0](name) or "node"
        node_id = base
        for k in range(2, len(self.ids) + 3):  # one of these is free: there are fewer ids in use
            if node_id not in self.ids and not leaky_markers(Node(node_id, name, like.type)):
                break
            node_id = f"{base}_{k}"
        return node_id

    def _within_shares(self, node_type: str, name: str) -> bool:
        """With name added, no first word is more common among the type's new names than it is among its real
        names or than a typical real first word is, and names with a digit are no more common than among the real
        ones (each one over the share allowed, so the first names can come)."""
        real_firsts, real_digits, n_real = self.real_marks[node_type]
        firsts, (made, digits) = self.made_marks[node_type]
        word = _first_word(name)
        if self.keep_shape:  # a pseudonym: its words are dealt as often as they stand in the real names (_pick's deck)
            return True
        if firsts[word] + 1 > max(real_firsts[word] / n_real, 1 / len(real_firsts)) * (made + 1) + 1:
            return False
        return not _has_digit(name) or digits + 1 <= real_digits / n_real * (made + 1) + 1

    def _fresh(self, name: str) -> bool:
        """Not a name in use, and not an input name followed by more words ('Kazan' -> 'Kazan River'), nor one that
        holds an input name of several words inside it (pseudonyms: 'Edward Martinez' holds 'Edward Martin')."""
        if not name.strip() or name.casefold() in self.names or self._extends(name):
            return False
        if self.avoid and any(w.casefold() in self.avoid for w in re.findall(r"[^\W_]+", name)):
            return False
        return self.holds_input is None or not self.holds_input.held_in(name.casefold())

    def _extends(self, name: str) -> bool:
        """name is an input name followed by more words, and that input name is not how the name it replaces opens
        too ('Queen Victoria' opens with the band 'Queen': 'Queen Alvina' may replace it)."""
        words = name.casefold().split(" ")
        return any(
            " ".join(words[:k]) in self.input_names and words[:k] != self.replacing[:k] for k in range(1, len(words))
        )

    def _id(self, like: Node, name: str, longer: int = 0) -> str | None:
        """An id for name in the style of like's id, or None if it would equal or extend one in use: the same
        prefix and word style ('person_irina' -> 'person_anna_belova', 'org_north' -> 'org_tsentr_vostok',
        'Golden_Gate' -> 'Tower_Hill'); an opaque id ('m.0abc1', 'Q42') keeps the prefix common to all ids and
        redraws each other character by kind, with `longer` more characters once the short ones run out."""
        node_id = None
        for make in self.id_schemes:
            made = make(like.name)
            if made and (like.id == made or like.id.endswith("_" + made) or like.id.startswith(made + "_")):
                prefix = like.id[: len(like.id) - len(made)] if like.id.endswith(made) else ""
                node_id = prefix + make(name)
                break
        if node_id is None and (template := id_template(like)) is not None:  # made of some words of the name
            if longer:
                return None  # no longer id: a shape no real id has; another name is drawn instead
            prefix, picks, to_word = template
            parts = [to_word(w) for w in re.findall(r"[^\W_]+", name)]
            if len(parts) < len(picks):
                return None
            chosen: Sequence[int] = picks
            if not all(-len(parts) <= k < len(parts) for k in picks) or len({k % len(parts) for k in picks}) < len(
                picks
            ):
                # a shorter name than like's: its first parts, as many (the id's shape is the same)
                chosen = range(len(picks))
            node_id = prefix + "_".join(parts[k] for k in chosen)
        if node_id is None and re.fullmatch(r"[^\W_]+(?:_[^\W_]+)*", like.id):  # readable words, not made from the name
            head = like.id.split("_", 1)[0]
            make = slug if like.id.isascii() and like.id.islower() else snake if like.id.islower() else words
            prefix = (
                f"{head}_" if "_" in like.id and self.heads[head] > 1 and not make(name).startswith(f"{head}_") else ""
            )
            node_id = prefix + make(name)
        if node_id is None:
            rest = like.id[len(self.id_prefix) :]
            rest += (rest[-1:] or "0") * longer
            node_id = self.id_prefix + "".join(
                self.rng.choice(self.id_chars[k]) if (k := self._kind(c)) != "other" and self.id_chars[k] else c
                for c in rest
            )
        if node_id in self.ids:  # an id may extend an input id ('person_ines' -> 'person_ines_brandt'), as real ones do
            return None
        if leaky_markers(Node(node_id, name, like.type)):
            return None
        return node_id


class Held:
    """Names of several words (folded), and whether a text holds one of them, starting at its start or after a
    character that is no letter or digit ('edward martinez' holds 'edward martin'): a lookup of the text's word at
    each such start among the names' first words, then one per length of the names that begin with it, instead of
    a search for every name (a regex of 6,000 alternatives cost 0.2 ms a text)."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names)
        self.lengths: dict[str, list[int]] = {}  # a name's first word -> the lengths of the names that begin with it
        for name in self.names:
            self.lengths.setdefault(name.split(" ", 1)[0], []).append(len(name))
        self.lengths = {w: sorted(set(lengths)) for w, lengths in self.lengths.items()}

    def held_in(self, text: str) -> bool:
        for i in [0, *(k + 1 for k, c in enumerate(text) if not c.isalnum())]:
            space = text.find(" ", i)
            if space > i and any(
                text[i : i + n] in self.names for n in self.lengths.get(text[i:space], ()) if i + n <= len(text)
            ):
                return True
        return False


def id_template(node: Node) -> tuple[str, tuple[int, ...], Callable[[str], str]] | None:
    """How a node's id is made of some of its name's words, after a prefix: 'person_ana' for 'Ana Ruiz' is
    ('person_', (0,), slug), the first word; 'org_lewis' for 'Carol Lewis' ('org_', (-1,), slug), the last; None
    when the id ends in no word of the name. The longest run of name words at the end of the id is taken."""
    found = re.findall(r"[^\W_]+", node.name)
    tokens = node.id.split("_")
    for make in ID_SCHEMES[:3]:
        made = [make(w) for w in found]
        picks: list[int] = []
        for token in reversed(tokens):
            if token not in made:
                break
            k = made.index(token)
            picks.insert(0, k - len(made) if k == len(made) - 1 and k > 0 else k)  # the last word stays the last
        if picks and len(set(picks)) == len(picks):
            return (
                "_".join(tokens[: len(tokens) - len(picks)]) + ("_" if len(tokens) > len(picks) else ""),
                tuple(picks),
                make,
            )
    return None
