"""Entry points: HTTP API, CLI, and the container that wires every concrete class."""
