"""Observability that every layer may use without depending on a vendor library: search and ingest
events (the API turns them into Prometheus metrics), optional OpenTelemetry spans (no-ops unless
tracing is on; the library is imported only then) and the log format with request ids.

Nothing here imports the API, and nothing runs at import.
"""
