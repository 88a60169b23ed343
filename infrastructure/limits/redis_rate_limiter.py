"""Rate-limit counters in Redis, shared by every worker: one Lua script call per admission.

Keys, per scope and subject (`{prefix}limits:{scope}:{subject}:…`):

- `requests`: a sorted set of the turns admitted in the last minute, scored by the time (a sliding
  window: at most `rpm` in any 60 s), expiring a minute after the last one;
- `turns`: a sorted set of the running turns, scored by the end of their lease, so a slot of a
  worker that died lapses on its own; the key expires with the last lease;
- `tokens:{day}`: the tokens of the turns that ended that UTC day, kept one day past it.

Every check of every scope and every count runs in one script, atomically: two workers admitting
at the same moment can never both take the last slot, and a refused turn counts nowhere.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from application.errors import EventStoreUnavailable
from application.ports.rate_limits import DAY, RPM_WINDOW, SLOT_RETRY, Quota, RateLimiter, Refusal
from domain.accounts.rate_limits import LimitName

if TYPE_CHECKING:
    from infrastructure.redis_client import RedisClient

# KEYS: per quota its requests, turns and tokens keys. ARGV: now, lease, turn, window, then per
# quota its rpm, concurrent_turns and tokens_per_day (0: unlimited). Reply: nil, or {quota index,
# limit, the score of the admission that must leave the window first (rpm only)}.
_ADMIT = """
local now, lease, turn, window = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
for q = 0, #KEYS / 3 - 1 do
  local requests, turns, tokens = KEYS[q * 3 + 1], KEYS[q * 3 + 2], KEYS[q * 3 + 3]
  local rpm, slots, per_day = tonumber(ARGV[q * 3 + 5]), tonumber(ARGV[q * 3 + 6]), tonumber(ARGV[q * 3 + 7])
  if per_day > 0 and tonumber(redis.call('GET', tokens) or '0') >= per_day then
    return {q, 'tokens_per_day', ''}
  end
  if slots > 0 then
    redis.call('ZREMRANGEBYSCORE', turns, '-inf', now)
    if redis.call('ZCARD', turns) >= slots then return {q, 'concurrent_turns', ''} end
  end
  if rpm > 0 then
    redis.call('ZREMRANGEBYSCORE', requests, '-inf', now - window)
    local count = redis.call('ZCARD', requests)
    if count >= rpm then
      return {q, 'rpm', redis.call('ZRANGE', requests, count - rpm, count - rpm, 'WITHSCORES')[2]}
    end
  end
end
for q = 0, #KEYS / 3 - 1 do
  if tonumber(ARGV[q * 3 + 5]) > 0 then
    redis.call('ZADD', KEYS[q * 3 + 1], now, turn)
    redis.call('PEXPIRE', KEYS[q * 3 + 1], math.ceil(window * 1000))
  end
  if tonumber(ARGV[q * 3 + 6]) > 0 then
    redis.call('ZADD', KEYS[q * 3 + 2], now + lease, turn)
    redis.call('PEXPIRE', KEYS[q * 3 + 2], math.ceil(lease * 1000))
  end
end
return false
"""

# KEYS: per quota its turns key. ARGV: now, lease, turn. A lapsed slot is not taken back.
_RENEW = """
local now, lease, turn = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
for _, turns in ipairs(KEYS) do
  local until_ = redis.call('ZSCORE', turns, turn)
  if until_ and tonumber(until_) > now then
    redis.call('ZADD', turns, 'XX', now + lease, turn)
    redis.call('PEXPIRE', turns, math.ceil(lease * 1000))
  end
end
"""

# KEYS: per quota its turns and tokens keys. ARGV: turn, tokens, the tokens keys' expiry (epoch s),
# then per quota 1 when it counts tokens.
_RELEASE = """
local turn, tokens, expire_at = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
for q = 0, #KEYS / 2 - 1 do
  redis.call('ZREM', KEYS[q * 2 + 1], turn)
  if ARGV[q + 4] == '1' and tokens > 0 then
    redis.call('INCRBY', KEYS[q * 2 + 2], tokens)
    redis.call('EXPIREAT', KEYS[q * 2 + 2], expire_at)
  end
end
"""


class RedisRateLimiter(RateLimiter):
    def __init__(self, client: RedisClient) -> None:
        self._client = client

    def _key(self, quota: Quota, *parts: str) -> str:
        return self._client.key("limits", quota.scope.value, quota.subject, *parts)

    def _tokens_key(self, quota: Quota, now: float) -> str:
        return self._key(quota, "tokens", str(int(now // DAY)))

    async def admit(self, turn: str, quotas: tuple[Quota, ...], now: float, lease: float) -> Refusal | None:
        keys: list[str] = []
        args: list[Any] = [repr(now), repr(lease), turn, repr(RPM_WINDOW)]
        for quota in quotas:
            keys += [self._key(quota, "requests"), self._key(quota, "turns"), self._tokens_key(quota, now)]
            args += [quota.limits.of(name) for name in (LimitName.RPM, LimitName.CONCURRENT_TURNS,
                                                       LimitName.TOKENS_PER_DAY)]
        reply = await self._run(_ADMIT, keys, args, "checking a turn's rate limits")
        if reply is None:
            return None
        index, name, oldest = reply
        limit = LimitName(name)
        if limit is LimitName.RPM:
            retry = float(oldest) + RPM_WINDOW - now
        elif limit is LimitName.TOKENS_PER_DAY:
            retry = DAY - now % DAY
        else:
            retry = SLOT_RETRY
        return Refusal(limit, quotas[int(index)], retry)

    async def renew(self, turn: str, quotas: tuple[Quota, ...], now: float, lease: float) -> None:
        keys = [self._key(q, "turns") for q in quotas if q.limits.of(LimitName.CONCURRENT_TURNS)]
        if keys:
            await self._run(_RENEW, keys, [repr(now), repr(lease), turn], "renewing a turn's slot")

    async def release(self, turn: str, quotas: tuple[Quota, ...], now: float, tokens: int) -> None:
        keys: list[str] = []
        args: list[Any] = [turn, tokens, math.ceil((now // DAY + 2) * DAY)]
        for quota in quotas:
            keys += [self._key(quota, "turns"), self._tokens_key(quota, now)]
            args.append(1 if quota.limits.of(LimitName.TOKENS_PER_DAY) else 0)
        await self._run(_RELEASE, keys, args, "giving back a turn's slot")

    async def _run(self, source: str, keys: list[str], args: list[Any], action: str) -> Any:
        return await self._client.run_script(source, keys, args, EventStoreUnavailable, action)
