"""Workflows: graphs of nodes run as a DAG, recorded, and offered to agents as tools."""
