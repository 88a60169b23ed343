"""Settings from the environment: prefix MEMAGENT_, nesting with `__`.

Example: MEMAGENT_MEMORY__BACKEND=redis, MEMAGENT_LLM__API_KEY=sk-...
Each section's class lives in the module of this package named for it; this root names them all.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from interfaces.settings.agents import AgentSettings, AgentsSettings
from interfaces.settings.jobs import JobsSettings
from interfaces.settings.knowledge import EmbeddingsSettings, KnowledgeSettings
from interfaces.settings.limits import BudgetsSettings, LimitsSettings
from interfaces.settings.llm import LLMSettings, ModelProfiles
from interfaces.settings.memory import MemorySettings
from interfaces.settings.observability import LogSettings, MetricsSettings, TracingSettings
from interfaces.settings.protocols import A2ASettings, McpSettings
from interfaces.settings.retention import RetentionSettings
from interfaces.settings.server import AuthSettings, ServerSettings
from interfaces.settings.source import GuardedEnvSource
from interfaces.settings.storage import DatabaseSettings, EventsSettings, RedisSettings
from interfaces.settings.turn import TitlesSettings, TurnSettings
from interfaces.settings.workflows import WorkflowsSettings


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
    models: ModelProfiles = Field(
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
    workflows: WorkflowsSettings = WorkflowsSettings()
    tokenizer_encoding: str = "cl100k_base"

    @classmethod
    def settings_customise_sources(  # noqa: PLR0913 - pydantic-settings' signature
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment is read by a source that refuses JSON nested too deep as a plain error.
        return init_settings, GuardedEnvSource(settings_cls), dotenv_settings, file_secret_settings
