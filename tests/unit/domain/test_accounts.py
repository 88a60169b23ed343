"""API keys: their shape, their hash, and the rules of a stored key."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from domain.accounts.keys import (
    ApiKey,
    ApiKeyId,
    check_owner,
    hash_api_key,
    looks_like_key,
    make_raw_key,
)
from domain.errors import DomainError
from domain.ids import OwnerId

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SECRET = "A" * 43
RAW = "mk_" + SECRET


def key(**overrides: object) -> ApiKey:
    values: dict[str, object] = {
        "id": ApiKeyId("k1"), "owner": OwnerId("alice"), "name": "laptop",
        "key_hash": hash_api_key(RAW), "created_at": T0,
    }
    return ApiKey(**(values | overrides))  # type: ignore[arg-type]


def test_a_raw_key_is_the_prefix_and_the_secret() -> None:
    assert make_raw_key(SECRET) == RAW
    assert looks_like_key(RAW)


@pytest.mark.parametrize("secret", ["short", "A" * 31, "A" * 40 + "!!!", "A" * 40 + " xy"])
def test_a_short_or_non_url_safe_secret_is_refused(secret: str) -> None:
    with pytest.raises(DomainError):
        make_raw_key(secret)


@pytest.mark.parametrize(
    "raw", ["", "mk_", "mk_short", "sk_" + SECRET, SECRET, "mk_" + SECRET + "é", "mk_" + "A" * 300]
)
def test_strings_without_the_shape_of_a_key_are_not_keys(raw: str) -> None:
    assert not looks_like_key(raw)


def test_the_hash_is_sha256_hex_and_differs_per_key() -> None:
    assert hash_api_key(RAW) == hashlib.sha256(RAW.encode()).hexdigest()
    assert len(hash_api_key(RAW)) == 64
    assert hash_api_key(RAW) != hash_api_key("mk_" + "B" * 43)
    assert RAW not in hash_api_key(RAW)


def test_an_active_key_matches_only_its_own_raw_key() -> None:
    assert key().matches(RAW)
    assert not key().matches("mk_" + "B" * 43)


def test_a_revoked_key_matches_nothing_and_keeps_its_first_revocation_time() -> None:
    revoked = key().revoke(T0 + timedelta(days=1))
    assert not revoked.is_active
    assert not revoked.matches(RAW)
    assert revoked.revoke(T0 + timedelta(days=2)).revoked_at == T0 + timedelta(days=1)


@pytest.mark.parametrize(
    "overrides",
    [
        {"id": ""},
        {"owner": ""},
        {"owner": "has space"},
        {"owner": "x" * 256},
        {"name": "   "},
        {"name": "x" * 101},
        {"name": "line\nbreak"},
        {"key_hash": "not-a-hash"},
        {"key_hash": hash_api_key(RAW).upper()},
        {"created_at": datetime(2026, 1, 1)},  # noqa: DTZ001
        {"revoked_at": datetime(2026, 1, 1)},  # noqa: DTZ001
    ],
)
def test_a_key_that_breaks_a_rule_cannot_exist(overrides: dict[str, object]) -> None:
    with pytest.raises(DomainError):
        key(**overrides)


def test_an_owner_id_is_printable_without_spaces() -> None:
    assert check_owner("team-42") == "team-42"
    for bad in ("", " ", "a b", "tab\there", "x" * 256):
        with pytest.raises(DomainError):
            check_owner(bad)
