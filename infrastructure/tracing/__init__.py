"""Traces: the OpenTelemetry adapter of the Tracer port, its set-up, the model-call spans and a recording fake."""
