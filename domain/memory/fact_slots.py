"""Which fact a value belongs to: one slot per fact, whatever words named it.

A correction replaces a fact only when it lands in the same slot (`domain.memory.entities.merge_entity`
merges by type), yet the words of a change name it differently from the first statement: "my new
manager" (`new_manager`), "my boss" (`boss`), "I'm a teacher now" (`occupation` after `job`), 我的新号码
(`新号码` after `电话号码`). `fact_slot` maps those to one type:

- change words around a type are dropped: `new_`, `current_`, `latest_`, `_now`, and before a
  known Chinese type 新, 现在的, 目前的 (新经理 → 经理 → `manager`);
- synonyms (`SLOTS`), English and Chinese, name one slot: `occupation` → `job`, `boss` → `manager`,
  `gp` → `doctor`, 电话号码 → `phone`; `favorite_color` → `favourite_colour`, 最喜欢的颜色 → `favourite_colour`;
- a relation held by one person at a time (`ONE_HOLDER`: manager, partner, doctor…) is one slot, its
  name too: `manager_name` → `manager` (while `dog_name` stays: a person may have several dogs).

`plain_value` drops the words a change adds around a fact's value: "green now" → "green",
"called Carla" → "Carla".
"""

from __future__ import annotations

import re

SLOTS = {
    "job": ("occupation", "profession", "job_title", "工作", "职业"),
    "employer": ("company", "workplace", "公司", "单位"),
    "phone": ("phone_number", "mobile", "mobile_number", "mobile_phone", "cell", "cell_phone", "cellphone",
              "telephone", "telephone_number", "contact_number", "电话", "电话号码", "手机", "手机号",
              "手机号码", "号码"),
    "email": ("email_address", "e_mail", "e_mail_address", "mail", "邮箱", "电子邮箱", "邮件地址"),
    "city": ("home_city", "city_of_residence", "城市", "所在城市"),
    "home_address": ("address", "地址", "住址", "家庭住址"),
    "name": ("full_name", "名字", "姓名"),
    "age": ("年龄",),
    "birthday": ("date_of_birth", "生日"),
    "diet": ("饮食",),
    "car": ("vehicle", "车", "汽车", "车子"),
    "manager": ("boss", "line_manager", "supervisor", "经理", "老板", "上司", "领导"),
    "partner": ("spouse", "significant_other", "life_partner", "伴侣", "对象", "爱人"),
    "doctor": ("gp", "family_doctor", "physician", "general_practitioner", "医生", "家庭医生"),
    "dentist": ("牙医",),
}
_ALIASES = {alias: slot for slot, aliases in SLOTS.items() for alias in aliases}
# Relations a person has one of at a time: a new one replaces the old one.
ONE_HOLDER = frozenset(("manager", "partner", "doctor", "dentist", "landlord", "therapist", "lawyer", "accountant",
                        "coach", "trainer", "tutor", "hairdresser", "boyfriend", "girlfriend", "wife", "husband"))
# What follows "favourite" in Chinese, as the English type names it (最喜欢的颜色 → favourite_colour).
FAVOURITE_ZH = {"颜色": "colour", "城市": "city", "食物": "food", "菜": "food", "运动": "sport", "书": "book",
                "电影": "film", "歌手": "singer", "乐队": "band", "动物": "animal", "饮料": "drink", "水果": "fruit"}
_CHANGE = re.compile(r"^(?:(?:new|current|latest)_)+|(?:_(?:now|currently))+$")
_CHANGE_ZH = re.compile(r"^(?:新的?|现在的|目前的)")


def fact_slot(kind: str) -> str:
    """The slot of a type already keyed by `entity_type` (lower case, `_` between words)."""
    key = _CHANGE.sub("", kind) or kind
    key = re.sub(r"^(?:favorite|fav)_", "favourite_", key)
    key = re.sub(r"(?<![^_])color(?![^_])", "colour", key)
    if key.startswith("favourite_") and key.removeprefix("favourite_") in FAVOURITE_ZH:
        return "favourite_" + FAVOURITE_ZH[key.removeprefix("favourite_")]
    bare = _CHANGE_ZH.sub("", key)
    if bare != key and bare in _ALIASES:
        key = bare
    key = _ALIASES.get(key, key)
    if key.endswith("_name") and _ALIASES.get(key[:-5], key[:-5]) in ONE_HOLDER:
        key = _ALIASES.get(key[:-5], key[:-5])
    return key


# Words a change adds around a value, never part of it: lower case only, so that a title keeps its
# own ("Apocalypse Now").
# Read from the end, not by the pattern r"(?:[\s,]+(?:now|...|instead))+$": that one tried every
# start in a run of spaces and was quadratic on them (issue 36).
_AFTER = ("now", "these days", "nowadays", "from now on", "at the moment", "currently", "at present", "instead")
_BEFORE = re.compile(r"^(?:(?:now|currently|called|named|actually)\s+)+")


def plain_value(value: str) -> str:
    """The value without the change's words around it, unless nothing would be left."""
    plain = _BEFORE.sub("", without_change_after(value)).strip()
    return plain or value


def without_change_after(value: str) -> str:
    """`value` less its trailing change words, each after spaces or commas (as `$`, before a last newline)."""
    end = len(value) - 1 if value.endswith("\n") else len(value)
    cut = end
    while (word := next((w for w in _AFTER if value.endswith(w, 0, cut)), None)) is not None:
        start = run = cut - len(word)
        while run > 0 and (value[run - 1].isspace() or value[run - 1] == ","):
            run -= 1
        if run == start:
            break
        cut = run
    return value[:cut] + value[end:]
