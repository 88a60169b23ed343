"""The pattern table of the rule-based extractor (`rule_entity_extractor`, whose docstring lists what
each pattern reads and the confidence it gives).

Every pattern runs on each user sentence, so each is linear-time on any text (no nested or
overlapping repetition that could backtrack; tests/bench/regex_growth.py runs
them all on long adversarial text). A row is (pattern, type, confidence): the value is the pattern's
last group; a pattern with two groups names the type too, its first group filling the `{}` of the
row's type ("a cat called Miso" → `cat_name`, 我最喜欢的城市是成都 → `favourite_城市`).
"""

from __future__ import annotations

import re


def word_alternatives(words: str) -> str:
    r"""`(?:w1|w2|…)` for `|`-separated words (each starting with a plain letter), written so that a
    position is tried against the words of its first letter only: `(?=[im])(?:i(?:'m| am)|m(?:y|ine))`.
    The same matches as the plain alternation, several times faster on long text."""
    groups: dict[str, list[str]] = {}
    for word in words.split("|"):
        groups.setdefault(word[0], []).append(word[1:])
    firsts = "".join(groups)
    return f"(?=[{firsts}])(?:" + "|".join(f"{first}(?:{'|'.join(rest)})" for first, rest in groups.items()) + ")"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")

_WORD = r"[A-Z][\w'-]*"
_NAME = rf"({_WORD}(?:\s+{_WORD}){{0,2}})"
_END = r"(?=\s*+(?:[.!?;,]|\band\b|\bbut\b|\bso\b|$))"  # the spaces taken at once: no backtracking
# The shortest text (at least one character) up to the end of the clause, as `(.+?)\s*(?:…)` had it,
# in linear time: it may end only on a non-space (or after its first character), the spaces after it
# are taken at once (`\s*+`), and a line's end ends it too (no sentence holds one: they are split
# at newlines), so every start that reaches the clause matches, and its text is never scanned again.
CLAUSE = r"(.(?:.*?(?<!\s))??)\s*+(?:[.!?;]|,\s*+(?:and|but|so)\b|$|(?=\n))"
# When a move happened, after the city: "last month", "recently", "in 2020", "two years ago".
_WHEN = (
    r"(?:(?:last|this|next|early|earlier|late) (?:week|month|year|spring|summer|autumn|fall|winter|weekend|time)"
    r"|recently|lately|yesterday|today|just now|a while ago|(?:back )?in \d{4}|in (?:" + "|".join(MONTHS) + r")"
    r"|(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several|\d+) "
    r"(?:days?|weeks?|months?|years?) ago)\b"
)
# A city: up to three words, none of them starting a time phrase, which may follow it.
_CITY = rf"({_WORD}(?:\s++(?!{_WHEN}){_WORD}){{0,2}})(?:\s++{_WHEN})?{_END}"
# Words that end a thing's name (a preposition, a time, a conjunction) or are no name (a pronoun).
_STOP = word_alternatives(
    "in|on|at|with|for|every|each|since|from|to|of|by|and|but|so|or|because|when|while|after|before|during|"
    "last|this|next|now|nowadays|lately|recently|today|tonight|tomorrow|yesterday|twice|once|sometimes|often|"
    "regularly|a lot|a bit|as|too|very|really|quite|well|badly|more|it|that|them|him|her|you|me|us|along|around|"
    "up|out|how|about|what|lot|bit|little|few|much|many|some|something|anything|everything|nothing|all"
)
# A thing's name: one to three words (taken whole, `++`), none a stop word — "the cello in a
# community orchestra" → "cello".
_THING = rf"((?!{_STOP}\b)[\w'-]++(?:\s++(?!{_STOP}\b)[\w'-]++){{0,2}})"
_ARTICLE = r"(?:(?:the|an?) )?"
_PETS = "cat|dog|kitten|puppy|rabbit|hamster|parrot"
# 我的X是Y: X holds no 是, and none of 不 (a negation), 也 都 还 就 (an aside: "我的车也是…"), 说 觉 认 想
# (whose thought it is: "我的朋友说他是…"); Y is no question word ("我的生日是什么时候").
_ZH_SUBJECT = r"([^\s，。！？,.!?是不也都还就说觉认想]{1,8})是"
_ZH_VALUE = r"(?!什么|谁|哪)([^\s，。！？,!?]{1,30})"

PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = (
    (re.compile(rf"\b[Mm]y name is {_NAME}{_END}"), "name", 0.95),
    (re.compile(rf"\b(?:[Cc]all me|I go by) {_NAME}{_END}"), "name", 0.85),
    (re.compile(rf"\bI(?:'m| am) ({_WORD}){_END}"), "name", 0.6),
    (_rx(rf"\bI(?: live| am living|'m living| moved| have moved|'ve moved| am moving|'m moving| relocated) "
         rf"(?:in|to) {_CITY}"), "city", 0.9),
    (re.compile(rf"\bI(?:'m| am) (?:from|based in) {_NAME}{_END}"), "hometown", 0.85),
    (_rx(r"\bI(?:'m| am) (vegan|vegetarian|pescatarian|gluten[- ]free|lactose[- ]intolerant)\b"), "diet", 0.9),
    (_rx(rf"\bI(?:'m| am) allergic to {CLAUSE}"), "allergy", 0.9),
    (_rx(r"\bI(?:'m| am) (\d{1,3})(?: years old| yo)?(?=\s*(?:[.!?,;]|$))"), "age", 0.9),
    (_rx(r"\bI work as (?:an? )?" + CLAUSE), "job", 0.85),
    (_rx(r"\bI work (?:at|for) " + CLAUSE), "employer", 0.85),
    (_rx(r"\bI (?:really |also |much )?prefer " + CLAUSE), "preference", 0.85),
    (_rx(r"\bI (?:really |also )?(?:like|love|enjoy|adore) " + CLAUSE), "likes", 0.8),
    (_rx(r"\bI (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like) " + CLAUSE),
     "dislikes", 0.8),
    (_rx(r"\b(?:remind me to|don't let me forget to|do not let me forget to|I (?:still )?(?:need|have|got) to|"
         r"I must|I have yet to|to-?do:) " + CLAUSE), "task", 0.8),
    (_rx(rf"\bI (?:also |still |really )?play {_ARTICLE}{_THING}"), "plays", 0.85),
    (_rx(rf"\bI(?:'m| am|'ve been| have been)(?: currently| also| still| now)? (?:learning|studying) "
         rf"(?:how to |to )?{_ARTICLE}{_THING}"), "learning", 0.85),
    (re.compile(rf"\b[Ii] (?:also |still |really )?support (?:the )?{_NAME}"), "supports", 0.85),
    (_rx(rf"\bI(?:'m| am) (?:a |an )?(?:big |huge |great |massive )?fan of {_ARTICLE}{_THING}"), "supports", 0.8),
    (_rx(r"\bI(?:'m| am|'ve been| have been)(?: currently| still)? saving(?: up)? (?:for|to buy|to get) "
         + _ARTICLE + CLAUSE), "saving_for", 0.8),
    (re.compile(rf"(?i:\b(?:an?|my|our) (?:(?:little|new|young|old|black|white|grey|gray|ginger|tabby|rescue) )?"
                rf"({_PETS})) (?i:called|named) {_NAME}"), "{}_name", 0.85),
    (re.compile(r"我叫([^\s，。！？,.!?]{1,10})"), "name", 0.95),
    (re.compile(r"我的名字是([^\s，。！？,.!?]{1,10})"), "name", 0.95),
    (re.compile(r"我住在([^\s，。！？,.!?]{1,20})"), "city", 0.9),
    (re.compile(r"我喜欢([^\s，。！？,.!?]{1,20})"), "likes", 0.8),
    (re.compile(r"提醒我([^\s，。！？,.!?]{1,40})"), "task", 0.8),
    (re.compile(rf"我的(?!名字是){_ZH_SUBJECT}{_ZH_VALUE}"), "{}", 0.85),
    (re.compile(rf"我最喜欢的{_ZH_SUBJECT}{_ZH_VALUE}"), "favourite_{}", 0.85),
)
# "my X is Y", "our X is Y": group 1 the owner, 2 the thing, 3 its value.
MY_THING = _rx(r"\b(my|our) ((?:[\w'-]+\s+){0,3}?[\w'-]+) (?:is|are|was|will be) (?:now |actually |still )?"
               + CLAUSE)
# An address starts where a run of its characters does: from inside a run, the run's start matches
# first, and trying every position of a long run to find no "@" made it quadratic.
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"(?<![\w+])(\+\d[\d ().-]{7,}\d|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4})(?!\w)")
