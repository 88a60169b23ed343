"""MEMAGENT_WORKFLOWS__*: how long and how deep a workflow may run, how long a streamed run goes on
without a client, and what its templates, `code` nodes and `http_request` nodes may use
(docs/workflows.md)."""

from pydantic import BaseModel, Field


class WorkflowsSettings(BaseModel):
    """A run's time and nesting, and the limits of the three places where a workflow runs what its
    author wrote: templates (Jinja's sandbox, in process), `code` nodes (RestrictedPython in a child
    process) and `http_request` nodes."""

    timeout: float = Field(300.0, gt=0, le=86_400, description="seconds a run may take before it ends `timeout`")
    max_depth: int = Field(
        3, ge=1, le=16, description="how deep workflows may run inside each other (a workflow tool in a workflow)")
    client_grace: float = Field(
        30.0, gt=0, le=3600,
        description="seconds a streamed run goes on with no client following it; then it is stopped")
    iteration_parallelism: int = Field(
        4, ge=1, le=64, description="items an iteration node runs at once when it names no `parallelism`")

    allow_private_networks: bool = Field(
        False, description="let http_request nodes reach loopback, private, link-local and reserved addresses",
    )
    http_max_body_bytes: int = Field(1_000_000, ge=1024, le=100_000_000,
                                     description="the largest response body an http_request node reads")
    http_max_timeout: float = Field(30.0, gt=0, le=600, description="the most seconds a node's `timeout` may ask for")
    code_cpu_seconds: float = Field(2.0, gt=0, le=60, description="CPU seconds one run of a code node may use")
    code_memory_mb: int = Field(256, ge=32, le=16_384, description="memory one run of a code node may use")
    code_wall_seconds: float = Field(5.0, gt=0, le=300,
                                     description="seconds one run of a code node may take, its process start included")
    code_output_bytes: int = Field(1_000_000, ge=1024, le=100_000_000,
                                   description="the largest JSON a code node's main() may return")
    code_max_processes: int = Field(8, ge=1, le=256, description="code nodes running at once in one process")
    template_max_chars: int = Field(1_000_000, ge=1024, le=100_000_000,
                                    description="the longest text or value a template may make")
    template_max_steps: int = Field(100_000, ge=1000, le=10_000_000,
                                    description="loop iterations and calls one template render may do")
