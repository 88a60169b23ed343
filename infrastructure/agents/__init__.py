"""AgentConfigs adapters."""
