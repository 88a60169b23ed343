"""Budget reservations in Redis, shared by every worker: one Lua script call per reservation.

A hash per budget and period (`{prefix}budgets:{allowance key}`) maps each holder to what it holds:
"amount until settled_at" (settled_at 0 while it is a reservation). The key expires with its last
entry, so a worker that died leaves nothing behind past its lease. Every budget is checked and
every reservation taken in one script, atomically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import EventStoreUnavailable
from application.ports.budget_reservations import Allowance, BudgetReservations

if TYPE_CHECKING:
    from collections.abc import Sequence

    from infrastructure.redis_client import RedisClient

# KEYS: the budgets. ARGV: now, holder, amount, until, then per budget its room and read_at.
# Reply: 0 when held, else the (1-based) index of the first budget without room.
_RESERVE = """
local now, holder, amount, until_ = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
for i, key in ipairs(KEYS) do
  local room, read_at = tonumber(ARGV[3 + i * 2]), tonumber(ARGV[4 + i * 2])
  local entries, held = redis.call('HGETALL', key), 0
  for j = 1, #entries, 2 do
    local value, lapse, settled = string.match(entries[j + 1], '(%S+) (%S+) (%S+)')
    if tonumber(lapse) <= now then
      redis.call('HDEL', key, entries[j])
    elseif tonumber(settled) == 0 or tonumber(settled) > read_at then
      held = held + tonumber(value)
    end
  end
  if held >= room then return i end
end
for _, key in ipairs(KEYS) do
  redis.call('HSET', key, holder, amount .. ' ' .. ARGV[4] .. ' 0')
  if redis.call('PTTL', key) < (until_ - now) * 1000 then redis.call('PEXPIREAT', key, math.ceil(until_ * 1000)) end
end
return 0
"""

# KEYS: the budgets. ARGV: now, holder, until. A lapsed or settled entry is left as it is.
_RENEW = """
local now, holder, until_ = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
for _, key in ipairs(KEYS) do
  local entry = redis.call('HGET', key, holder)
  if entry then
    local value, lapse, settled = string.match(entry, '(%S+) (%S+) (%S+)')
    if tonumber(settled) == 0 and tonumber(lapse) > now then
      redis.call('HSET', key, holder, value .. ' ' .. ARGV[3] .. ' 0')
      if redis.call('PTTL', key) < (until_ - now) * 1000 then redis.call('PEXPIREAT', key, math.ceil(until_ * 1000)) end
    end
  end
end
"""

# KEYS: the budgets. ARGV: now, holder, cost, until.
_SETTLE = """
local now, holder, until_ = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[4])
for _, key in ipairs(KEYS) do
  redis.call('HSET', key, holder, ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. ARGV[1])
  if redis.call('PTTL', key) < (until_ - now) * 1000 then redis.call('PEXPIREAT', key, math.ceil(until_ * 1000)) end
end
"""


class RedisBudgetReservations(BudgetReservations):
    def __init__(self, client: RedisClient) -> None:
        self._client = client

    def _keys(self, keys: Sequence[str]) -> list[str]:
        return [self._client.key("budgets", key) for key in keys]

    async def reserve(
        self, holder: str, amount: float, allowances: Sequence[Allowance], now: float, lease: float
    ) -> int | None:
        args: list[Any] = [repr(now), holder, repr(amount), repr(now + lease)]
        for allowance in allowances:
            args += [repr(allowance.room), repr(allowance.read_at)]
        keys = self._keys([allowance.key for allowance in allowances])
        refused = int(await self._run(_RESERVE, keys, args, "reserving a turn's budget"))
        return refused - 1 if refused else None

    async def renew(self, holder: str, keys: Sequence[str], now: float, lease: float) -> None:
        await self._run(_RENEW, self._keys(keys), [repr(now), holder, repr(now + lease)], "renewing a reservation")

    async def settle(self, holder: str, cost: float, keys: Sequence[str], now: float, linger: float) -> None:
        args = [repr(now), holder, repr(cost), repr(now + linger)]
        await self._run(_SETTLE, self._keys(keys), args, "settling a reservation")

    async def release(self, holder: str, keys: Sequence[str]) -> None:
        with self._client.translate(EventStoreUnavailable, "releasing a reservation"):
            async with self._client.commands.pipeline(transaction=False) as pipe:
                for key in self._keys(keys):
                    pipe.hdel(key, holder)
                await pipe.execute()

    async def _run(self, source: str, keys: list[str], args: list[Any], action: str) -> Any:
        if not keys:
            return 0
        return await self._client.run_script(source, keys, args, EventStoreUnavailable, action)
