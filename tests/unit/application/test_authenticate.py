"""Authenticate (who is asking) and the key management use cases, on in-memory fakes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from application.accounts.authenticate import LOCAL_OWNER, Authenticate
from application.accounts.create_api_key import CreateApiKey
from application.accounts.list_api_keys import ListApiKeys
from application.accounts.revoke_api_key import RevokeApiKey
from application.errors import InvalidInput, NotFound, StoreUnavailable, Unauthorized
from domain.accounts.keys import ApiKey, ApiKeyId, hash_api_key, looks_like_key
from domain.ids import OwnerId
from tests.fakes import T0, CountingSecrets, FakeApiKeyStore, FakeClock, SequentialIds

ALICE_KEY = "mk_" + "a" * 43
BOB_KEY = "mk_" + "b" * 43
REVOKED_KEY = "mk_" + "r" * 43
UNKNOWN_KEY = "mk_" + "u" * 43


def stored(raw: str, owner: str, *, revoked: bool = False) -> ApiKey:
    return ApiKey(
        id=ApiKeyId(f"key-{owner}-{raw[3]}"), owner=OwnerId(owner), name=owner,
        key_hash=hash_api_key(raw), created_at=T0, revoked_at=T0 + timedelta(hours=1) if revoked else None,
    )


@pytest.fixture
def keys() -> FakeApiKeyStore:
    return FakeApiKeyStore(
        stored(ALICE_KEY, "alice"), stored(BOB_KEY, "bob"), stored(REVOKED_KEY, "carol", revoked=True)
    )


@pytest.mark.parametrize("require_keys", [True, False])
async def test_a_valid_bearer_key_acts_as_its_owner_in_both_modes(
    keys: FakeApiKeyStore, require_keys: bool
) -> None:
    authenticate = Authenticate(keys, require_keys=require_keys)
    assert (await authenticate(f"Bearer {ALICE_KEY}")).owner == "alice"
    assert (await authenticate(f"bearer   {BOB_KEY}  ")).owner == "bob"


@pytest.mark.parametrize("header", [None, "", "   ", "Basic dXNlcjpwYXNz"])
async def test_without_a_key_keys_required_is_unauthorized(keys: FakeApiKeyStore, header: str | None) -> None:
    with pytest.raises(Unauthorized) as refused:
        await Authenticate(keys, require_keys=True)(header)
    assert "memagent keys create" in refused.value.message
    assert refused.value.code == "unauthorized"


@pytest.mark.parametrize("header", [None, "", "Basic dXNlcjpwYXNz"])
async def test_without_a_key_single_user_mode_is_the_local_owner(
    keys: FakeApiKeyStore, header: str | None
) -> None:
    assert (await Authenticate(keys, require_keys=False)(header)).owner == LOCAL_OWNER
    assert keys.lookups == 0


@pytest.mark.parametrize("header", ["Bearer sk-anything", "Bearer ollama", "Bearer EMPTY", "Bearer", "Bearer  "])
async def test_a_bearer_that_is_no_memagent_key_is_the_local_owner_in_single_user_mode(
    keys: FakeApiKeyStore, header: str
) -> None:
    assert (await Authenticate(keys, require_keys=False)(header)).owner == LOCAL_OWNER
    assert keys.lookups == 0
    with pytest.raises(Unauthorized):
        await Authenticate(keys, require_keys=True)(header)


@pytest.mark.parametrize("require_keys", [True, False])
@pytest.mark.parametrize("header", [f"Bearer {UNKNOWN_KEY}", f"Bearer {REVOKED_KEY}", "Bearer mk_short",
                                    f"Bearer {ALICE_KEY}x!", f"Bearer {ALICE_KEY} extra"])
async def test_a_wrong_or_revoked_key_is_unauthorized_in_both_modes(
    keys: FakeApiKeyStore, require_keys: bool, header: str
) -> None:
    with pytest.raises(Unauthorized) as refused:
        await Authenticate(keys, require_keys=require_keys)(header)
    token = header.partition(" ")[2].strip()
    assert not token or token not in refused.value.message  # the key sent is never echoed


async def test_a_string_without_the_shape_of_a_key_is_refused_without_a_lookup(keys: FakeApiKeyStore) -> None:
    with pytest.raises(Unauthorized):
        await Authenticate(keys, require_keys=True)("Bearer " + "x" * 5000)
    assert keys.lookups == 0


async def test_a_failing_key_store_is_store_unavailable_not_unauthorized(keys: FakeApiKeyStore) -> None:
    keys.fail = True
    with pytest.raises(StoreUnavailable):
        await Authenticate(keys, require_keys=True)(f"Bearer {ALICE_KEY}")


def creator(keys: FakeApiKeyStore) -> CreateApiKey:
    return CreateApiKey(keys, CountingSecrets(), FakeClock(), SequentialIds())


async def test_create_makes_a_new_account_and_stores_only_the_hash() -> None:
    keys = FakeApiKeyStore()
    created = await creator(keys)("  alice laptop ")
    assert looks_like_key(created.raw)
    assert created.key.name == "alice laptop"
    assert created.key.key_hash == hash_api_key(created.raw)
    assert created.raw not in repr(created)
    assert list(keys.keys.values()) == [created.key]
    assert all(created.raw not in repr(stored_key) for stored_key in keys.keys.values())
    assert (await Authenticate(keys, require_keys=True)(f"Bearer {created.raw}")).owner == created.key.owner


async def test_each_create_without_an_owner_is_a_different_account() -> None:
    keys = FakeApiKeyStore()
    create = creator(keys)
    first, second = await create("one"), await create("two")
    assert first.key.owner != second.key.owner
    assert first.raw != second.raw
    assert first.key.owner != LOCAL_OWNER


async def test_create_with_an_owner_adds_a_key_to_that_account() -> None:
    keys = FakeApiKeyStore()
    create = creator(keys)
    first = await create("laptop")
    second = await create("phone", first.key.owner)
    assert second.key.owner == first.key.owner
    assert [k.name for k in await ListApiKeys(keys)(first.key.owner)] == ["laptop", "phone"]


@pytest.mark.parametrize(("name", "owner"), [("", None), ("   ", None), ("x" * 101, None), ("ok", "a b")])
async def test_create_with_a_bad_name_or_owner_is_invalid_input_and_stores_nothing(
    name: str, owner: str | None
) -> None:
    keys = FakeApiKeyStore()
    with pytest.raises(InvalidInput):
        await creator(keys)(name, owner)
    assert keys.keys == {}


async def test_revoke_refuses_the_key_at_once_and_twice_is_harmless(keys: FakeApiKeyStore) -> None:
    revoke = RevokeApiKey(keys, FakeClock())
    authenticate = Authenticate(keys, require_keys=False)
    alice = next(k for k in keys.keys.values() if k.owner == "alice")
    first = await revoke(alice.id)
    assert first.revoked_at is not None
    assert (await revoke(alice.id)).revoked_at == first.revoked_at
    with pytest.raises(Unauthorized):
        await authenticate(f"Bearer {ALICE_KEY}")
    assert (await authenticate(f"Bearer {BOB_KEY}")).owner == "bob"


async def test_revoking_an_unknown_key_is_not_found(keys: FakeApiKeyStore) -> None:
    with pytest.raises(NotFound):
        await RevokeApiKey(keys, FakeClock())(ApiKeyId("nope"))


async def test_list_shows_every_key_or_one_owners(keys: FakeApiKeyStore) -> None:
    assert {k.owner for k in await ListApiKeys(keys)()} == {"alice", "bob", "carol"}
    assert [k.owner for k in await ListApiKeys(keys)(OwnerId("bob"))] == ["bob"]
