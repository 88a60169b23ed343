"""Adapters of workflow nodes: templates (Jinja2), the code sandbox and outbound HTTP."""
