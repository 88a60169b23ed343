"""`GET /metrics`: the Prometheus scrape (docs/operations.md "Metrics" lists the families).

Outside `/api/`, so the key gate does not see it: `AuthorizeScrape` checks the account key or the
metrics token here (no body to guard). The token is compared, never echoed or logged.

No `from __future__ import annotations`: dependency_injector's wiring reads `Provide[...]` from the
evaluated annotations, and would leave string ones unwired.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Request, Security
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from application.accounts.authorize_scrape import AuthorizeScrape
from application.ports.metrics import MetricsPage
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.provided import Provided

router = APIRouter()

# The same scheme as the API's (interfaces/http/owner.py), so the spec names one: the metrics token
# is sent the same way.
_bearer = HTTPBearer(auto_error=False, bearerFormat="mk_…", description="A key from `memagent keys create`.")
SCRAPE_ERRORS: dict[int | str, dict[str, Any]] = {s: ERROR_RESPONSES[s] for s in (400, 401, 403, 405, 503)}
TEXT = {"text/plain": {"schema": {"type": "string"}}}


@router.get(
    "/metrics", response_class=Response,
    responses={200: {"content": TEXT, "description": "The Prometheus text exposition format."}, **SCRAPE_ERRORS},
)
@inject
async def metrics(
    request: Request,
    authorize: Annotated[AuthorizeScrape, Depends(Provided["authorize_scrape"])],
    page: Annotated[MetricsPage, Depends(Provided["metrics"])],
    _documented: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
) -> Response:
    """The service's metrics, every worker's when several share `PROMETHEUS_MULTIPROC_DIR`. Needs an
    account key or `MEMAGENT_METRICS__TOKEN` as the Bearer credential (open in single-user mode); an
    agent key is 403."""
    await authorize(request.headers.get("authorization"))
    body, content_type = page.render()
    return Response(body, media_type=content_type, headers={"Cache-Control": "no-store"})
