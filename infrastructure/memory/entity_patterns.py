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
    r"|recently|lately|yesterday|today|just now|now|these days|nowadays|for good|a while ago|(?:back )?in \d{4}"
    r"|in (?:" + "|".join(MONTHS) + r")"
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
_NOW = r"(?:\s++(?:now|from now on|these days))?"  # a change's words after a name: not part of it
_PETS = "cat|dog|kitten|puppy|rabbit|hamster|parrot"
# 我的X是Y (also 我现在的X是Y): X holds no 是, and none of 不 (a negation), 也 都 还 就 (an aside:
# "我的车也是…"), 说 觉 认 想 (whose thought it is: "我的朋友说他是…"); Y is no question word ("我的生日是什么时候").
# A change's verb may stand for 是 (我最喜欢的颜色已经变成紫色了), so X holds none of 已 变 换 either.
_ZH_SUBJECT = r"([^\s，。！？,.!?是不也都还就说觉认想已变换]{1,8})(?:是|已经变成|变成|换成)了?"
_ZH_VALUE = r"(?!什么|谁|哪)([^\s，。！？,!?]{1,30})"
_ZH_NOW = r"我(?:现在|目前|已经)?"  # 我, or a change's 我现在 / 我目前 / 我已经
_ZH_PLAIN = r"([^\s，。！？,.!?了]{1,20})"  # a value up to the clause's end, or its 了
# A one-holder relation named as a thing of the user's ("Kenji is my manager now", "a new boss called Olga").
_ONE_HOLDER = "manager|boss|supervisor|doctor|GP|dentist|partner|landlord|therapist"
# No name: "This is my manager"; nor a sentence's first word ("So Kenji is my boss" → Kenji).
_NOT_NAMES = "(?:This|That|He|She|It|Who|What|Which|There|Here|Mine|Yours|So|And|But|Now|Well|Yes|Oh|Also|Then)"
DIETS = "vegan|vegetarian|pescatarian|gluten[- ]free|dairy[- ]free|lactose[- ]intolerant"
DIETS_ZH = "素食者|纯素食者|素食主义者|严格素食者"
# What "I'm a …" names as a job (with one of MODIFIERS before it: "a software engineer").
JOBS = word_alternatives(
    "accountant|actor|actress|analyst|architect|artist|baker|banker|barista|biologist|butcher|carpenter|cashier|"
    "chef|chemist|cleaner|clerk|consultant|cook|dancer|dentist|designer|developer|doctor|driver|economist|editor|"
    "electrician|engineer|farmer|firefighter|gardener|hairdresser|interpreter|journalist|judge|lawyer|lecturer|"
    "librarian|manager|mechanic|midwife|musician|nurse|optician|painter|paramedic|pharmacist|photographer|"
    "physician|physicist|physiotherapist|pilot|plumber|police officer|professor|programmer|psychologist|"
    "receptionist|researcher|scientist|secretary|singer|surgeon|tailor|teacher|technician|therapist|translator|"
    "tutor|vet|veterinarian|waiter|waitress|writer"
)
MODIFIERS = word_alternatives(
    "software|school|primary school|high school|senior|junior|head|data|civil|staff|registered|freelance|"
    "graphic|web|sales|product|project|research|music|art|science|maths|math|english|university"
)

PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = (
    (re.compile(rf"\b[Mm]y name is {_NAME}{_NOW}{_END}"), "name", 0.95),
    (re.compile(rf"\b(?:[Cc]all me|I go by) {_NAME}{_NOW}{_END}"), "name", 0.85),
    (re.compile(rf"\b(?:I(?:'ve| have)? )?changed my name to {_NAME}"), "name", 0.95),
    (re.compile(rf"\bI(?:'m| am) ({_WORD}){_END}"), "name", 0.6),
    (_rx(rf"\b(?:I|we)(?:'ve|'re|'m| have| are| am)?(?: just| recently| finally| now)? "
         rf"(?:live|living|moved|moving|relocated|relocating) (?:in|to) {_CITY}"), "city", 0.9),
    (_rx(rf"\bI(?:'m| am)(?: now)? based in {_CITY}"), "city", 0.9),
    (re.compile(rf"\b(?i:home)(?: for (?:me|us))? is(?: now)? {_NAME}{_NOW}{_END}"), "city", 0.85),
    (re.compile(rf"\bI(?:'m| am) from {_NAME}{_END}"), "hometown", 0.85),
    (_rx(rf"\bI(?:'m| am| eat| went|'ve gone| have gone)(?: now| fully)? ({DIETS})\b"), "diet", 0.9),
    (_rx(rf"\bI(?:'m| am) allergic to {CLAUSE}"), "allergy", 0.9),
    (_rx(r"\bI(?:'m| am) (\d{1,3})(?: years old| yo)?(?: now)?(?=\s*(?:[.!?,;]|$))"), "age", 0.9),
    (_rx(r"\bI(?:'ve| have)?(?: just| recently)? turned (\d{1,3})\b"), "age", 0.9),
    (_rx(r"\b(?:I|and)(?:'m| am)?(?: now)? work(?:ing)? as (?:an? )?" + CLAUSE), "job", 0.85),
    (_rx(rf"\bI(?:'m| am)(?: now)? an? ((?:{MODIFIERS} )?{JOBS})\b"), "job", 0.85),
    (_rx(r"\bI work (?:at|for) " + CLAUSE), "employer", 0.85),
    (re.compile(rf"\bI(?:'ve| have)?(?: just| recently)? joined (?:the )?{_NAME}"), "employer", 0.85),
    (_rx(rf"\bI(?: now| currently)? drive (?:an? |the )?(?-i:{_NAME})"), "car", 0.85),
    (_rx(rf"\bI (?:sold|traded in|replaced) my (?:old )?car and (?:bought|got) (?:an? |the )?(?:new )?(?-i:{_NAME})"),
     "car", 0.85),
    (_rx(rf"\bI(?:'ve| have)(?: got)? an? (?:new )?({_ONE_HOLDER}) (?:called|named) (?-i:{_NAME})"), "{}", 0.85),
    # Tried only where a run of a name's characters starts: from inside a long run it would be quadratic.
    (re.compile(rf"(?<![\w'-])(?!{_NOT_NAMES}\b)(?=(?:{_WORD}\s+){{0,2}}{_WORD} is (?:now )?(?:my|our) (?:new )?"
                rf"((?i:{_ONE_HOLDER}))\b){_NAME} is (?:now )?(?:my|our) (?:new )?(?i:{_ONE_HOLDER})\b"), "{}", 0.85),
    (_rx(r"\bI (?:really |also |much )?prefer " + CLAUSE), "preference", 0.85),
    (_rx(r"\bI(?:'ve| have)?(?: just| now)? switched to " + CLAUSE), "preference", 0.8),
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
    (re.compile(rf"{_ZH_NOW}(?:住在|搬到|搬去|搬家到|搬回){_ZH_PLAIN}"), "city", 0.9),
    (re.compile(rf"{_ZH_NOW}(?:今年|刚满|刚|都)?(\d{{1,3}})岁"), "age", 0.9),
    (re.compile(rf"{_ZH_NOW}是一(?:名|位){_ZH_PLAIN}"), "job", 0.85),
    (re.compile(rf"换了?工作了?[，,]\s*+我?(?:现在|目前)?是(?:一名|一位)?{_ZH_PLAIN}"), "job", 0.85),
    (re.compile(r"我(?:现在|目前)?在(?!家|这|那|公司|外地)([^\s，。！？,.!?在]{1,20}?)(?:工作|上班)"), "employer",
     0.85),
    (re.compile(rf"跳槽到{_ZH_PLAIN}"), "employer", 0.85),
    (re.compile(rf"我(?:现在)?是({DIETS_ZH})"), "diet", 0.9),
    (re.compile(rf"换了?车了?[，,]\s*+我?(?:现在)?开(?:的是)?(?:一辆)?{_ZH_PLAIN}"), "car", 0.85),
    (re.compile(r"我喜欢([^\s，。！？,.!?]{1,20})"), "likes", 0.8),
    (re.compile(r"提醒我([^\s，。！？,.!?]{1,40})"), "task", 0.8),
    (re.compile(rf"我(?:现在|目前)?的(?!名字是){_ZH_SUBJECT}{_ZH_VALUE}"), "{}", 0.85),
    (re.compile(rf"我(?:现在|目前)?最喜欢的{_ZH_SUBJECT}{_ZH_VALUE}"), "favourite_{}", 0.85),
)
# A diet the user says no longer holds: its value is "no longer <diet>" (不再是<diet>), which replaces
# the diet as a statement of the other would (the negation guards of the table would drop it).
RETRACTIONS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (_rx(rf"\bI(?:'m| am)(?: now)? no longer ({DIETS})\b"), "diet", "no longer "),
    (_rx(rf"\bI(?:'m| am) not ({DIETS}) any ?more\b"), "diet", "no longer "),
    (re.compile(rf"我(?:不再是|已经不再?是)({DIETS_ZH})"), "diet", "不再是"),
)
# "my X is Y", "our X is Y": group 1 the owner, 2 the thing, 3 its value.
MY_THING = _rx(r"\b(my|our) ((?:[\w'-]+\s+){0,3}?[\w'-]+) (?:is|are|was|will be) (?:now |actually |still )?"
               + CLAUSE)
# An address starts where a run of its characters does: from inside a run, the run's start matches
# first, and trying every position of a long run to find no "@" made it quadratic.
# Both are ASCII, so that the Chinese around them is no part of them (我换邮箱了，现在用ann@example.org).
EMAIL = re.compile(r"(?<![A-Za-z0-9_.+-])[A-Za-z0-9_.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# International, North American, or a Chinese mobile number (13800138000).
PHONE = re.compile(
    r"(?<![A-Za-z0-9_+])(\+\d[\d ().-]{7,}\d|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}|1[3-9]\d{9})(?![A-Za-z0-9_])"
)
