"""An agent's usage stats over HTTP: per UTC day, per published version, in total. Owner only
(an account key); another account's agent is 404."""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Query

from application.agents.usage_stats import MAX_DAYS, ReadUsageStats
from application.ports.usage_stats import UsageFigures, UsageReport
from domain.agents.agent import MAX_VERSION
from domain.ids import AppId
from interfaces.http.agents import AgentPath, Owner
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.provided import Provided

router = APIRouter(responses=ERROR_RESPONSES, tags=["agents"])

# A day as RFC 3339's full-date that Python's `date` can hold: month 01-12, day 01-31, year 0001
# on (no lookahead: pydantic's pattern engine has none). Whether the day exists (not 2026-02-30),
# and whether the window is one (`to` not before `from`, at most MAX_DAYS days), the use case
# checks: a 422 the schema can say in words only.
_DAY = r"^(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$"
_WINDOW = f"`to` not before `from`, at most {MAX_DAYS} days in all (else 422)"
From = Annotated[
    str | None,
    Query(alias="from", min_length=10, max_length=10, pattern=_DAY, json_schema_extra={"format": "date"},
          description=f"The first UTC day (YYYY-MM-DD), included; default: 29 days before `to`. {_WINDOW}."),
]
To = Annotated[
    str | None,
    Query(alias="to", min_length=10, max_length=10, pattern=_DAY, json_schema_extra={"format": "date"},
          description=f"The last UTC day (YYYY-MM-DD), included; default: today. {_WINDOW}."),
]
Version = Annotated[int | None, Query(ge=1, le=MAX_VERSION, description="Only the turns of this published version.")]


@router.get("/api/agents/{agent_id}/stats")
@inject
async def agent_stats(
    agent_id: AgentPath, owner: Owner, read: Annotated[ReadUsageStats, Depends(Provided["agents.read_usage_stats"])],
    first: From = None, last: To = None, version: Version = None,
) -> dict[str, Any]:
    """Conversations, messages, end users, tokens, cost, latency, time to first token, likes and
    dislikes of the agent's published turns (not the debugger's), per UTC day (every day of the
    window, zeros included), per version (newest first) and in total. `tokens` and `cost` are the
    turns' own calls; `upkeep_tokens` and `upkeep_cost` the other calls for those conversations
    (memory upkeep, titles, follow-up questions, embeddings); `total_tokens` and `total_cost` both."""
    return report_data(await read(AppId(agent_id), owner, first, last, version))


def report_data(report: UsageReport) -> dict[str, Any]:
    return {
        "agent_id": report.agent_id,
        "from": report.first.isoformat(),
        "to": report.last.isoformat(),
        "version": report.version,
        "total": figures_data(report.total),
        "days": [{"date": d.day.isoformat(), **figures_data(d.figures)} for d in report.days],
        "versions": [{"version": v.version, **figures_data(v.figures)} for v in report.versions],
    }


def figures_data(figures: UsageFigures) -> dict[str, Any]:
    return {
        "conversations": figures.conversations,
        "messages": figures.messages,
        "end_users": figures.end_users,
        "prompt_tokens": figures.prompt_tokens,
        "completion_tokens": figures.completion_tokens,
        "tokens": figures.tokens,
        "cost": figures.cost,
        "avg_latency": figures.avg_latency,
        "avg_first_token_latency": figures.avg_first_token_latency,
        "likes": figures.likes,
        "dislikes": figures.dislikes,
        "upkeep_tokens": figures.upkeep_tokens,
        "upkeep_cost": figures.upkeep_cost,
        "total_tokens": figures.total_tokens,
        "total_cost": figures.total_cost,
    }
