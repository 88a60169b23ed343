"""The work of each node type (application/workflows/node_work.py), one module per kind of work."""
