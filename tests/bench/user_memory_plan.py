"""The script of tests/bench/user_memory.py: one end user's 12 conversations, the 40 facts planted in
them (10 corrected in a later conversation, 5 stated in Chinese), the 40 questions about them, and
the texts of the 1,000 other conversations seeded for the timings.

Each fact is said the way a user would say it. `route` is where the offline memory can carry it to a
new conversation: `facts` when the rule-based extractor reads it as a user fact (it then sits in
"Known facts about the user" of every prompt), `recall` when only the conversation's summary and
archive hold it (the extractor misses it, or reads it as conversation state: `car`, `coffee_order`,
`gym_class`, `blood_type`), so that it reaches a new conversation only by cross-conversation recall,
ranked by the embedder. Half the questions are paraphrased (`paraphrased`): they share no content word
with the statement, so that a bag-of-words ranking has little to go on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CONVERSATIONS = 12
PLANTED_IN = 9  # facts are first stated in conversations 1..9, round robin; corrections come in 10..12
QUESTION_DAY = 30  # conversation k runs on day 2k - 1 (1..23); the questions, each in a new conversation, later
LENGTHS = (24, 18, 30, 22, 26, 20, 32, 19, 25, 21, 28, 23)  # turns per conversation (full run): 288 in all
QUICK_FILLER = 2  # filler turns per conversation with --quick


@dataclass(frozen=True)
class Fact:
    key: str
    route: str  # "facts" (the extractor's user facts) or "recall" (summaries and archive entries only)
    statement: str
    question: str
    value: str  # what the prompt must hold, unless corrected
    paraphrased: bool = False
    correction: str = ""
    corrected: str = ""
    chinese: bool = False

    @property
    def latest(self) -> str:
        return self.corrected or self.value


def _f(key: str, statement: str, question: str, value: str, *, para: bool = False, fix: tuple[str, str] = ("", ""),
       zh: bool = False, route: str = "facts") -> Fact:
    return Fact(key, route, statement, question, value, para, fix[0], fix[1], zh)


FACTS = (
    _f("name", "我叫林美。", "我叫什么名字？", "林美", zh=True),
    _f("city", "我住在上海，离公司很近。", "Which city am I based in these days?", "上海", para=True, zh=True,
       fix=("Big news: I moved to Hangzhou.", "Hangzhou")),
    _f("likes", "我喜欢乌龙茶。", "我平时爱喝什么茶？", "乌龙茶", para=True, zh=True),
    _f("email", "My email is lin.mei@example.org", "What is my email address?", "lin.mei@example.org"),
    _f("phone", "You can reach me at +86 138 0013 8000.", "What number can I be reached on?",
       "+86 138 0013 8000", para=True),
    _f("hometown", "I'm from Suzhou, originally.", "Where am I from originally?", "Suzhou"),
    _f("job", "I work as a UX researcher.", "What do I do for a living?", "UX researcher", para=True,
       fix=("I work as a product manager now.", "product manager")),
    _f("employer", "I work at Northwind Labs.", "Where do I work?", "Northwind Labs",
       fix=("These days I work for Blue Harbor Analytics.", "Blue Harbor Analytics")),
    _f("diet", "I'm vegetarian.", "Do I eat meat?", "vegetarian", para=True),
    _f("allergy", "I'm allergic to peanuts.", "What am I allergic to?", "peanuts"),
    _f("age", "I'm 34 years old.", "How old am I?", "34", para=True),
    _f("dislikes", "I hate cilantro.", "Which herb do I hate?", "cilantro"),
    _f("seat", "I prefer window seats on long flights.", "Which seats do I prefer on long flights?", "window seats",
       fix=("Change of mind: I prefer aisle seats on long flights.", "aisle seats")),
    _f("colour", "My favourite colour is teal.", "What colour do I like best?", "teal", para=True,
       fix=("My favourite colour is now forest green.", "forest green")),
    _f("food", "My favourite food is mushroom risotto.", "What is my favourite food?", "mushroom risotto"),
    _f("band", "My favourite band is Radiohead.", "Which group do I love listening to most?", "Radiohead",
       para=True, fix=("These days my favourite band is Portishead.", "Portishead")),
    _f("book", "My favourite book is Dune.", "What is my favourite book?", "Dune"),
    _f("dog", "My dog's name is Biscuit.", "What's my dog called?", "Biscuit", para=True),
    _f("sister", "My sister's name is Clara.", "What is my sister's name?", "Clara"),
    _f("partner", "My partner's name is Jonas.", "Who am I in a relationship with?", "Jonas", para=True),
    _f("birthday", "My birthday is on March 14.", "When was I born?", "March 14", para=True),
    _f("native", "My native language is Mandarin.", "What is my native language?", "Mandarin"),
    _f("son", "My son's name is Leo.", "What do we call our boy?", "Leo", para=True),
    _f("mum", "My mum's birthday is on June 2.", "When is my mum's birthday?", "June 2"),
    _f("sport", "My favourite sport is badminton.", "What is my favourite sport?", "badminton"),
    _f("friend", "My best friend's name is Priya.", "Who is my closest pal?", "Priya", para=True),
    _f("address", "My home address is 8 Wukang Road.", "Where should a parcel for me be delivered?",
       "8 Wukang Road", para=True, fix=("My home address is now 21 Longjing Road.", "21 Longjing Road")),
    _f("coffee", "My coffee order is a flat white with oat milk.", "What is my coffee order?", "flat white",
       route="recall", fix=("New habit: my coffee order is a cortado.", "cortado")),
    _f("car", "My car is a red Fiat Panda.", "What am I driving these days?", "red Fiat Panda", para=True,
       route="recall", fix=("I sold the Fiat, and my car is a blue Renault Zoe now.", "Renault Zoe")),
    _f("gym", "My gym class is on Thursday evenings.", "When is my gym class?", "Thursday evenings", route="recall",
       fix=("My gym class is now on Tuesday mornings.", "Tuesday mornings")),
    _f("blood", "My blood type is O negative.", "What is my blood type?", "O negative", route="recall"),
    _f("japanese", "I'm learning Japanese in the evenings.", "Which foreign tongue am I studying?", "Japanese",
       para=True, route="recall"),
    _f("cello", "I play the cello in a community orchestra.", "Which instrument do I play?", "cello",
       route="recall"),
    _f("cat", "We adopted a cat called Miso last spring.", "What did we name our kitten?", "Miso", para=True,
       route="recall"),
    _f("running", "I run ten kilometres every Sunday morning.", "How far do I run every Sunday?", "ten kilometres",
       route="recall"),
    _f("club", "I support Benfica.", "Which football team am I a fan of?", "Benfica", para=True, route="recall"),
    _f("anniversary", "Our wedding anniversary is on September 12.", "When did we get married?", "September 12",
       para=True, route="recall"),
    _f("trip", "I'm saving up for a trip to Patagonia.", "Where am I saving up to go on a trip?", "Patagonia",
       route="recall"),
    _f("taichi", "我每天早上打太极拳。", "我每天早上打什么拳？", "太极拳", zh=True, route="recall"),
    _f("chengdu", "我最喜欢的城市是成都。", "我最爱哪座城市？", "成都", para=True, zh=True, route="recall"),
)

TOPICS = (
    "octopuses", "volcanoes", "the Roman empire", "black holes", "sourdough bread", "chess openings",
    "the history of jazz", "coral reefs", "electric kettles", "medieval castles", "honeybees", "glaciers",
    "the printing press", "origami", "tidal energy", "ancient Egypt", "solar eclipses", "typography",
)
FILLER = (
    "How's your day going?",
    "Thanks, that helps.",
    "Tell me a fun fact about {topic}.",
    "What do you think about {topic}?",
    "Can you explain {topic} simply?",
    "I watched a documentary about {topic} yesterday and it was fascinating.",
    "Give me three questions to ask an expert on {topic}.",
    "Summarise what makes {topic} interesting in two sentences.",
    "ok cool",
    "What should I read next about {topic}?",
    "haha that's funny",
    "Could {topic} be explained to a child?",
)


def conversations(quick: bool) -> list[list[str]]:
    """The queries of the 12 conversations, in order: each fact's statement in conversation
    1 + (its index mod 9), each correction in 10..12, filler around them, in a fixed shuffled order."""
    rng = random.Random(20260117)  # noqa: S311 - a fixed script, not security
    said: list[list[str]] = [[] for _ in range(CONVERSATIONS)]
    for index, fact in enumerate(FACTS):
        said[index % PLANTED_IN].append(fact.statement)
    corrected = [f for f in FACTS if f.correction]
    for index, fact in enumerate(corrected):
        said[PLANTED_IN + index * (CONVERSATIONS - PLANTED_IN) // len(corrected)].append(fact.correction)
    scripts = []
    for statements, length in zip(said, LENGTHS, strict=True):
        fillers = QUICK_FILLER if quick else max(0, length - len(statements))
        queries = statements + [rng.choice(FILLER).format(topic=rng.choice(TOPICS)) for _ in range(fillers)]
        rng.shuffle(queries)
        scripts.append(queries)
    return scripts


def asked() -> list[Fact]:
    """The order the questions are asked in (each in a new conversation): shuffled, fixed."""
    order = list(FACTS)
    random.Random(20260118).shuffle(order)  # noqa: S311
    return order


# --- the 1,000 other conversations of the user, for the timings ----------------------------------

PEOPLE = ("Marta", "Tom", "Aiko", "Ravi", "Sofia", "Ben", "Yusuf", "Elena")
PLACES = ("Berlin", "Kyoto", "Lima", "Oslo", "Nairobi", "Porto", "Seoul", "Denver")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# What a user says in other conversations; some share words with the questions (car, coffee, run,
# class, football, birthday, trip), as unrelated conversations do.
NOISE = (
    "I watched a documentary about {topic} and it was fascinating.",
    "I need to prepare a short talk about {topic} for {day}.",
    "Remind me to send the slides about {topic} to {person}.",
    "My flight to {place} is on {day}.",
    "I want to plan a weekend trip to {place} with {person}.",
    "Book a table for four at an Italian place on {day}.",
    "I'm comparing two laptops for work.",
    "The car needs new tyres before winter.",
    "I need to buy new running shoes.",
    "I'm looking for a good coffee grinder.",
    "The team meeting moved to {day} afternoon.",
    "I want to read more about {topic} this year.",
    "{person} recommended a podcast about {topic}.",
    "I need to fix the leaking kitchen tap.",
    "Let's plan a birthday dinner for {person} on {day}.",
    "I'm thinking of taking a pottery class.",
    "The football match on {day} was great.",
    "I still have to file the expense report from {place}.",
)


def noise_sentences(rng: random.Random, count: int) -> str:
    picked = rng.sample(NOISE, count)
    return " ".join(
        s.format(topic=rng.choice(TOPICS), day=rng.choice(DAYS), person=rng.choice(PEOPLE), place=rng.choice(PLACES))
        for s in picked
    )


def noise_conversations(count: int) -> list[tuple[str, str]]:
    """(summary, archive entry) of each of `count` other conversations: 3 to 6 sentences, and 2 or 3."""
    rng = random.Random(20260119)  # noqa: S311
    return [(noise_sentences(rng, rng.randint(3, 6)), noise_sentences(rng, rng.randint(2, 3))) for _ in range(count)]
