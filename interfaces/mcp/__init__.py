"""memagent as an MCP server: the server's tools and its HTTP endpoint."""
