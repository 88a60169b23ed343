"""HTTP routes. They get use cases from the container and never import adapters."""
