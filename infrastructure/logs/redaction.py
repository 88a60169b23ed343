"""The safety net under every log line: known secrets and anything shaped like one are masked.

Code never logs a secret on purpose (errors name a variable or a file, never its value); this is
for the line that slips through anyway: an exception quoting a URL with its password, a library
echoing a header. Known values are the settings' own secrets (model keys, the metrics token, the
database's and Redis's passwords); the shapes are memagent's API keys (`mk_…`), a URL's password
and a Bearer credential.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MASK = "***"
MIN_SECRET = 6  # shorter values are not worth masking and would mask ordinary words

_SHAPES = (
    (re.compile(r"\bmk_[A-Za-z0-9_-]{8,}"), "mk_" + MASK),
    # A URL's password. Tried once per run of scheme characters, from the run's first word start, not
    # from each word start as r"(\b[a-z][a-z0-9+.-]*://...)" did: quadratic on "a.a.a..." (issue 36).
    (
        re.compile(
            r"(?<![a-z0-9+.-])((?>[a-z0-9+.-]*?\b(?=[a-z]))[a-z0-9+.-]*+://[^:/?#@\s]*:)[^@/?#\s]+@", re.IGNORECASE
        ),
        r"\1" + MASK + "@",
    ),
    (re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE), r"\1" + MASK),
)


class Redactor:
    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        # The longest first: a secret that contains another is masked whole.
        self._secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        for shape, replacement in _SHAPES:
            text = shape.sub(replacement, text)
        return text
