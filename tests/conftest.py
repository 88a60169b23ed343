# Fixtures shared by several test modules, found by name wherever a test asks for them.
pytest_plugins = ["tests.integration.llm_server_fixtures"]
