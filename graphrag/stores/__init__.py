"""The only place that touches database drivers or query text."""
