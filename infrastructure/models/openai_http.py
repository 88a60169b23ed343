"""The HTTP side of a Chat Completions call, straight over aiohttp: one pooled session per model,
the request's headers and bounds, and an error status as a `StatusError`.

aiohttp parses HTTP in C, and its pool hands out a connection without walking the others (httpx's
pool walks every open connection on each request and release, which at two hundred concurrent
streams cost more than the requests themselves). What the openai SDK set up on its own is set up
here as it did: the default base URL, the environment's organization, project and proxy, the CAs
that httpx trusts, its pool's size and the bounds on connecting and reading.
"""

from __future__ import annotations

import functools
import io
import json
import os
import urllib.request
from importlib import metadata
from typing import TYPE_CHECKING, Any

import aiohttp
import httpx2
from yarl import URL

from infrastructure.models.openai_errors import StatusError
from infrastructure.models.provider_config import NO_KEY

if TYPE_CHECKING:
    import ssl
    from contextlib import AbstractAsyncContextManager

    from infrastructure.models.provider_config import ProviderConfig

OPENAI_API = "https://api.openai.com/v1"
MAX_CONNECTIONS = 1000  # the openai SDK's; idle ones close after KEEPALIVE_S, as httpx's did
KEEPALIVE_S = 5.0
MAX_ERROR_BODY = 64 << 10  # bytes of an error status's body read
LARGE_BODY = 1 << 20  # aiohttp's own threshold for a warning about a body sent in one piece


class ChatCompletionsHTTP:
    """POSTs to `{base_url}/chat/completions`; the base URL defaults as the openai SDK's does."""

    def __init__(self, config: ProviderConfig) -> None:
        base = config.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_API
        self.url = URL(base.rstrip("/") + "/chat/completions")
        self._headers = request_headers(config.api_key)
        # Connecting (the wait for a pooled connection included) and each read of the socket, as the
        # SDK bounded them; aiohttp does not bound the upload (the caller does).
        t = config.timeout
        self._timeout = aiohttp.ClientTimeout(total=None, connect=t, sock_connect=t, sock_read=t)
        self._session: aiohttp.ClientSession | None = None
        self._proxy: tuple[URL | None, dict[str, str] | None] = (None, None)

    def post(self, body: dict[str, Any]) -> AbstractAsyncContextManager[aiohttp.ClientResponse]:
        """The request, to be entered (`async with`) for its response once its headers are in."""
        session = self._session or self._open()
        data = json.dumps(body, ensure_ascii=False).encode()
        # A large body (inline images) is written piece by piece, the loop running in between.
        payload = data if len(data) <= LARGE_BODY else io.BytesIO(data)
        return session.post(self.url, data=payload, proxy=self._proxy[0], proxy_headers=self._proxy[1])

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    def _open(self) -> aiohttp.ClientSession:
        """The session, made on the first call, in the running loop it belongs to. Without aiohttp's
        `trust_env`, which reads ~/.netrc in a thread on every request: the environment's proxy is
        looked up here, once."""
        self._proxy = env_proxy(self.url)
        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_S, ssl=_tls())
        self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout, connector=connector)
        return self._session


def request_headers(api_key: str | None) -> dict[str, str]:
    """Auth and content headers, and the organization and project that the openai SDK read from the
    environment (OPENAI_ORG_ID, OPENAI_PROJECT_ID)."""
    headers = {
        "Authorization": f"Bearer {api_key or NO_KEY}",
        "Content-Type": "application/json",
        "Accept": "application/json",  # what the SDK sent, for a stream too
        "User-Agent": _user_agent(),
    }
    for name, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
        if value := os.environ.get(variable):
            headers[name] = value
    return headers


def env_proxy(url: URL) -> tuple[URL | None, dict[str, str] | None]:
    """The proxy the environment names for `url`, as httpx read it for the SDK: `<SCHEME>_PROXY`, else
    `ALL_PROXY`, unless `NO_PROXY` names the host; its credentials as a Proxy-Authorization header."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.host or ""):
        return None, None
    address = URL(proxy if "://" in proxy else f"http://{proxy}")
    if not address.user:
        return address, None
    credentials = aiohttp.encode_basic_auth(address.user, address.password or "")
    return address.with_user(None), {"Proxy-Authorization": credentials}


async def status_error(response: aiohttp.ClientResponse) -> StatusError:
    """What a response with an error status says: its status, headers and the server's message."""
    # Its start is all the log uses: a server (or a proxy) answering an error with a huge body must
    # not make the process read it all.
    return StatusError.of(response.status, response.headers, await response.content.read(MAX_ERROR_BODY))


@functools.cache
def _tls() -> ssl.SSLContext:
    """The CAs httpx trusts (SSL_CERT_FILE, the system's, found where a bundled Python does not look),
    loaded once per process."""
    return httpx2.create_ssl_context()


@functools.cache
def _user_agent() -> str:
    try:
        return f"memagent/{metadata.version('memagent')}"
    except metadata.PackageNotFoundError:  # run from a source tree
        return "memagent"
