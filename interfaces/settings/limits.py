"""MEMAGENT_LIMITS__* and MEMAGENT_BUDGETS__*: how many turns, tokens and dollars a key, agent or account may use."""

from __future__ import annotations

from pydantic import BaseModel, Field

from domain.accounts.rate_limits import MAX_LIMIT
from domain.billing.model_calls import MAX_BUDGET_USD


class LimitsSettings(BaseModel):
    """Rate limits and quotas of turns, per API key and per agent; 0 is unlimited. An agent's config
    may set its own (`limits`, over the `agent_*` ones). The counters are Redis's, shared by every
    worker, with MEMAGENT_EVENTS__BACKEND=redis, else this process's (application/chat_turn/turn_quota.py)."""

    key_rpm: int = Field(0, ge=0, le=MAX_LIMIT, description="turns one key may start in any 60 s")
    key_concurrent_turns: int = Field(0, ge=0, le=MAX_LIMIT, description="turns of one key running at once")
    key_tokens_per_day: int = Field(0, ge=0, le=MAX_LIMIT, description="tokens of one key's turns per UTC day")
    agent_rpm: int = Field(0, ge=0, le=MAX_LIMIT, description="turns of one agent started in any 60 s")
    agent_concurrent_turns: int = Field(0, ge=0, le=MAX_LIMIT, description="turns of one agent running at once")
    agent_tokens_per_day: int = Field(0, ge=0, le=MAX_LIMIT, description="tokens of one agent's turns per UTC day")
    lease: float = Field(
        30.0, gt=0, description="seconds a running turn's slot outlives its worker's last renewal (a killed worker)"
    )


class BudgetsSettings(BaseModel):
    """USD an account may spend on model calls per UTC day and month (unset: no limit), from the
    model-call ledger; an agent's own budget is in its config. A turn starts with a warning counted
    at `warn_at` of a budget, and is refused (402 `budget_exceeded`) once a budget is spent or held
    by running turns: each reserves its estimate (its prompt, plus `max_tokens` or
    `completion_estimate` tokens) while it runs, shared by every worker with
    MEMAGENT_EVENTS__BACKEND=redis (application/model_calls/budgets.py). A sum is reused `cache_ttl`
    seconds."""

    account_daily_usd: float | None = Field(
        None, ge=0, le=MAX_BUDGET_USD, allow_inf_nan=False, description="USD per account per UTC day")
    account_monthly_usd: float | None = Field(
        None, ge=0, le=MAX_BUDGET_USD, allow_inf_nan=False, description="USD per account per UTC month")
    warn_at: float = Field(0.8, gt=0, le=1, description="the share of a budget that counts a warning")
    cache_ttl: float = Field(5.0, ge=0, description="seconds a budget's spend sum is reused")
    completion_estimate: int = Field(
        1024, ge=1, le=1_000_000, description="tokens a turn's answer is expected to take, when no max_tokens is set")
