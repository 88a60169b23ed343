"""The corrections test set (issue 35, item 7): statement-and-correction pairs written from patterns.

Each kind of fact has statement and correction templates, in English and (for most kinds) in
Chinese, and a pool of values; pair `i` of a kind states its pool's value `i` with a statement
template and corrects it to the next value with a correction template, both chosen by `i`, so that
every template meets several values and no sentence is written by hand. A user (`Bundle`) holds one
pair of each kind: the statements in one conversation, the corrections in a later one, then a new
conversation whose prompt must hold every latest value and no superseded one.

A quarter of the pairs is held out of development (`held_out`): the pairs with the smallest
SHA-256 of their id, a fixed split that no tuning may look at. `score` reports both halves.

Each template also names the type a model would most likely give the value from those words
(`named`: "my boss" → `boss`, "I'm a teacher now" → `occupation`), for the scripted model of the LLM
path (tests/memory_corrections_model.py), which, like a good model, reuses a known fact's type when
it is shown one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

LANGUAGES = ("en", "zh")
PAIRS_PER_KIND = 7  # four English, three Chinese where a kind has Chinese templates
CHINESE_FROM = 4  # pair i is Chinese from this index on, when the kind has Chinese templates
HELD_OUT_SHARE = 4  # one pair in four


@dataclass(frozen=True)
class Template:
    text: str  # "{v}" is the value; "{a_v}" the value after "a" or "an"; "{old}" the value it corrects
    named: str  # the type a model would name from these words
    negates: bool = False  # "I'm no longer {old}": the latest value is `no longer {old}` (不再是{old})


@dataclass(frozen=True)
class Kind:
    slot: str  # the type memory keeps the fact under
    values: tuple[str, ...]
    said: tuple[Template, ...]
    corrected: tuple[Template, ...]
    values_zh: tuple[str, ...] = ()
    said_zh: tuple[Template, ...] = ()
    corrected_zh: tuple[Template, ...] = ()


def _t(named: str, *texts: str, negates: bool = False) -> tuple[Template, ...]:
    return tuple(Template(text, named, negates) for text in texts)


KINDS = (
    Kind("city", ("Lisbon", "Porto", "Vienna", "Toronto", "Seattle", "Dublin", "Buenos Aires"),
         _t("city", "I live in {v}.", "I'm based in {v}.", "Home for me is {v}."),
         _t("city", "I moved to {v}.", "I live in {v} now.", "I've just moved to {v}.", "We relocated to {v}."),
         ("北京", "上海", "杭州", "成都"), _t("city", "我住在{v}。"),
         _t("city", "我搬到{v}了。", "我现在住在{v}。", "我已经搬到{v}了。")),
    Kind("job", ("nurse", "teacher", "architect", "pharmacist", "electrician", "journalist", "accountant"),
         _t("job", "I work as {a_v}.") + _t("occupation", "I'm {a_v}."),
         _t("occupation", "I am {a_v} now.", "I'm now {a_v}.") + _t("job", "I changed jobs and work as {a_v} now.")
         + _t("job", "I'm working as {a_v} these days."),
         ("医生", "律师", "护士", "工程师"), _t("job", "我的工作是{v}。") + _t("occupation", "我是一名{v}。"),
         _t("job", "我现在的工作是{v}。") + _t("occupation", "我现在是一名{v}。", "我换工作了，现在是{v}。")),
    Kind("employer", ("Acme Corp", "Globex", "Initech", "Northwind Labs", "Contoso", "Blue Harbor", "Umbrella"),
         _t("employer", "I work at {v}.", "I work for {v}."),
         _t("employer", "I work at {v} now.", "I changed jobs: I work for {v} now.", "I've joined {v}.")
         + _t("company", "My new company is {v}."),
         ("阿里巴巴", "腾讯", "华为", "百度"), _t("employer", "我在{v}工作。"),
         _t("employer", "我现在在{v}工作。", "我已经跳槽到{v}了。")),
    Kind("diet", ("vegetarian", "vegan", "pescatarian", "gluten-free", "dairy-free"),
         _t("diet", "I'm {v}.", "I am {v}.", "I eat {v}."),
         _t("diet", "I'm no longer {old}.", "I'm not {old} anymore.", negates=True) + _t("diet", "I'm {v} now."),
         ("素食者", "纯素食者", "素食主义者"), _t("diet", "我是{v}。"),
         _t("diet", "我不再是{old}了。", "我已经不是{old}了。", negates=True)),
    Kind("age", ("29", "34", "41", "52", "38", "23"),
         _t("age", "I'm {v}.", "I'm {v} years old.", "I am {v} years old."),
         _t("age", "I just turned {v}.", "I'm {v} now.", "I turned {v} last week."),
         ("31", "45", "27"), _t("age", "我今年{v}岁。", "我{v}岁。"),
         _t("age", "我刚满{v}岁。", "我已经{v}岁了。", "我现在{v}岁了。")),
    Kind("phone", ("+1 415 555 0134", "+44 20 7946 0958", "555-123-4567", "(212) 555-0199", "+33 6 12 34 56 78"),
         _t("phone", "My phone number is {v}.", "You can reach me at {v}."),
         _t("phone", "My new number is {v}.", "My phone number is now {v}.")
         + _t("mobile", "I changed my mobile number to {v}."),
         ("13800138000", "13912345678", "15011112222"), _t("phone", "我的电话号码是{v}。"),
         _t("phone", "我的新号码是{v}。", "我换号码了，现在是{v}。")),
    Kind("car", ("Fiat Panda", "Renault Zoe", "Toyota Corolla", "Volkswagen Golf", "Honda Civic", "Mazda CX-5"),
         _t("car", "My car is a {v}.", "I drive a {v}."),
         _t("car", "I drive a {v} now.", "My new car is a {v}.", "I sold my car and bought a {v}."),
         ("比亚迪", "特斯拉", "丰田卡罗拉", "大众帕萨特"), _t("car", "我的车是{v}。"),
         _t("car", "我的新车是{v}。", "我换车了，现在开{v}。")),
    Kind("manager", ("Bruno", "Carla", "Maria", "Kenji", "Olga", "Samuel", "Priya"),
         _t("manager", "My manager is {v}.", "My manager is called {v}.") + _t("boss", "My boss is {v}."),
         _t("manager", "My new manager is called {v}.", "My manager is now {v}.", "{v} is my manager now.")
         + _t("boss", "I have a new boss called {v}."),
         ("王伟", "李娜", "张敏", "刘洋"), _t("manager", "我的经理是{v}。"),
         _t("manager", "我的新经理是{v}。", "我现在的经理是{v}。")),
    Kind("partner", ("Jonas", "Elena", "Marco", "Aisha", "Lukas", "Hana"),
         _t("partner", "My partner is {v}.", "My partner's name is {v}."),
         _t("partner", "My new partner is {v}.", "My partner is now {v}.")
         + _t("partner", "I split up with {old}; my partner now is {v}."),
         ("小林", "阿明", "晓雯", "志强"), _t("partner", "我的伴侣是{v}。"),
         _t("partner", "我现在的伴侣是{v}。", "我的新伴侣是{v}。")),
    Kind("doctor", ("Dr Patel", "Dr Okafor", "Dr Lindqvist", "Dr Moreau", "Dr Tanaka", "Dr Novak"),
         _t("doctor", "My doctor is {v}.") + _t("gp", "My GP is {v}.")
         + _t("family_doctor", "My family doctor is {v}."),
         _t("doctor", "My new doctor is {v}.", "I changed doctors, my doctor is {v} now.")
         + _t("gp", "{v} is my new GP."),
         ("王建国", "赵丽华", "孙志明", "周海燕"), _t("doctor", "我的医生是{v}。"),
         _t("doctor", "我的新医生是{v}。", "我现在的医生是{v}。")),
    Kind("favourite_colour", ("blue", "green", "teal", "purple", "orange", "yellow", "crimson"),
         _t("favourite_colour", "My favourite colour is {v}.", "My favorite color is {v}."),
         _t("favourite_colour", "My favourite colour is {v} now.", "My favourite colour is now {v}.",
            "These days my favourite colour is {v}."),
         ("蓝色", "绿色", "紫色", "黄色"), _t("favourite_colour", "我最喜欢的颜色是{v}。"),
         _t("favourite_colour", "我现在最喜欢的颜色是{v}。", "我最喜欢的颜色已经变成{v}了。")),
    Kind("email", ("ana@example.org", "ben.k@example.com", "c.diaz@example.net", "dev+io@example.io",
                   "eli_m@example.co", "fay@example.dev"),
         _t("email", "My email is {v}.", "You can write to me at {v}."),
         _t("email", "My new email is {v}.", "My email address changed to {v}.", "Please use {v} from now on."),
         ("lin@example.cn", "wang.f@example.cn", "zhao@example.com", "qian@example.org"),
         _t("email", "我的邮箱是{v}。"),
         _t("email", "我的新邮箱是{v}。", "我换邮箱了，现在用{v}。")),
    Kind("preference", ("tea", "coffee", "espresso", "matcha", "cocoa", "lemonade"),
         _t("preference", "I prefer {v}.", "I really prefer {v}."),
         _t("preference", "I prefer {v} now.", "These days I prefer {v}.", "I've switched to {v}.")),
    Kind("name", ("Anna Schmidt", "Anna Weber", "Lea Fischer", "Lea Braun", "Mia Keller", "Mia Wolf", "Ida Roth"),
         _t("name", "My name is {v}.", "Call me {v}."),
         _t("name", "I got married, my name is {v} now.", "I changed my name to {v}.",
            "Please call me {v} from now on.")),
)


@dataclass(frozen=True)
class Pair:
    id: str
    index: int
    slot: str
    language: str
    statement: str
    correction: str
    old: str
    latest: str
    said_as: str  # the types a model would name from the statement's words
    corrected_as: str  # and from the correction's

    @property
    def held_out(self) -> bool:
        return self.id in HELD_OUT


def _fill(template: Template, value: str, old: str) -> str:
    article = "an" if value[:1].casefold() in "aeiou" else "a"
    return template.text.format(v=value, a_v=f"{article} {value}", old=old)


def _pair(kind: Kind, index: int) -> Pair:
    chinese = bool(kind.said_zh) and index >= CHINESE_FROM
    values, said, corrected = (kind.values_zh, kind.said_zh, kind.corrected_zh) if chinese else \
        (kind.values, kind.said, kind.corrected)
    at = index - CHINESE_FROM if chinese else index
    old, new = values[at % len(values)], values[(at + 1) % len(values)]
    statement, correction = said[at % len(said)], corrected[at % len(corrected)]
    latest = (f"不再是{old}" if chinese else f"no longer {old}") if correction.negates else new
    return Pair(f"{kind.slot}-{index}", index, kind.slot, "zh" if chinese else "en", _fill(statement, old, old),
                _fill(correction, new, old), old, latest, statement.named, correction.named)


PAIRS = tuple(_pair(kind, index) for kind in KINDS for index in range(PAIRS_PER_KIND))
HELD_OUT = frozenset(sorted((p.id for p in PAIRS), key=lambda i: hashlib.sha256(i.encode()).hexdigest())
                     [: len(PAIRS) // HELD_OUT_SHARE])


@dataclass(frozen=True)
class Bundle:
    """One user's pairs: pair `index` of every kind."""

    index: int
    pairs: tuple[Pair, ...]


BUNDLES = tuple(Bundle(i, tuple(p for p in PAIRS if p.index == i)) for i in range(PAIRS_PER_KIND))
QUESTION = "What do you remember about me?"
# Each conversation ends with a task (a conversation's entity, never a user fact), whose being
# recorded says that the upkeep has run through the conversation.
CLOSING = "Remind me to call the bank."
CLOSING_TASK = "call the bank"


# --- scoring -------------------------------------------------------------------------------------

FACT_LINE = re.compile(r"^- ([\w]+): (.*)$", re.MULTILINE)


def holds(value: str, wanted: str) -> bool:
    """Whether `value` holds `wanted`: as whole words for Latin text, anywhere for Chinese."""
    value, wanted = value.casefold(), wanted.casefold()
    if not wanted.isascii():
        return wanted in value
    return re.search(rf"(?<![\w@.+-]){re.escape(wanted)}(?![\w@-])", value) is not None


def stale(pair: Pair, values: list[str]) -> bool:
    """Whether a current value still holds the superseded one: itself, or with stray words around it
    ("called Bruno"); a value that also holds the latest ("no longer vegetarian") does not count."""
    return any(holds(value, pair.old) and not holds(value, pair.latest) for value in values)


@dataclass(frozen=True)
class Outcome:
    """What a pair came to: the new conversation's facts section (type, value) and the memory API's
    current facts (type, value) with each one's history values."""

    pair: Pair
    prompt_facts: tuple[tuple[str, str], ...]
    current: tuple[tuple[str, str, tuple[str, ...]], ...]

    @property
    def latest_in_prompt(self) -> bool:
        return any(value.casefold() == self.pair.latest.casefold() for _, value in self.prompt_facts)

    @property
    def stale(self) -> bool:
        return stale(self.pair, [v for _, v in self.prompt_facts]) or stale(self.pair, [v for _, v, _ in self.current])

    @property
    def in_slot(self) -> bool:
        """The latest value is current under the kind's type, with the old one in its history."""
        return any(kind == self.pair.slot and value.casefold() == self.pair.latest.casefold() and self.pair.old in old
                   for kind, value, old in self.current)


def facts_section(system: str, header: str) -> tuple[tuple[str, str], ...]:
    part = next((p for p in system.split("\n\n") if p.startswith(header)), "")
    return tuple((m.group(1), m.group(2).strip()) for m in FACT_LINE.finditer(part))


def _half(outcomes: list[Outcome]) -> dict[str, object]:
    count = len(outcomes)
    latest = sum(o.latest_in_prompt for o in outcomes)
    return {
        "pairs": count, "latest_in_prompt": latest, "latest_share": round(latest / count, 4) if count else 0.0,
        "stale": sum(o.stale for o in outcomes), "in_slot_with_history": sum(o.in_slot for o in outcomes),
    }


def score(outcomes: list[Outcome]) -> dict[str, object]:
    """Both halves' scores, and what development may look at: its misses."""
    dev = [o for o in outcomes if not o.pair.held_out]
    held = [o for o in outcomes if o.pair.held_out]
    misses = [{"pair": o.pair.id, "statement": o.pair.statement, "correction": o.pair.correction,
               "latest": o.pair.latest, "stale": o.stale,
               "prompt": [f"{k}: {v}" for k, v in o.prompt_facts if holds(v, o.pair.old) or holds(v, o.pair.latest)]}
              for o in dev if o.stale or not o.latest_in_prompt]
    return {"development": _half(dev), "held_out": _half(held), "development_misses": misses}
