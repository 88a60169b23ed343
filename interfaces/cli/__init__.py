"""The `memagent` command line: `main.py` parses the commands; one module per command group."""
