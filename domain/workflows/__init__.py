"""Workflows: versioned graphs of nodes run as a DAG, and their runs."""
