"""What searches and ingests report to whoever listens (the API's metrics), without either side
knowing the other: the router and the pipeline call :func:`search_finished` / :func:`ingest_finished`,
and a listener registered with :func:`on_search` / :func:`on_ingest` records them.

Listeners are per process and must be quick (they run inline); one that raises is logged, never
allowed to fail the search or ingest it observes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphrag.models import LegReport

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchEvent:
    """One search: its mode and its legs' reports."""

    mode: str
    legs: Mapping[str, LegReport]


@dataclass(frozen=True)
class IngestEvent:
    """One ingest call: documents by outcome and the chunks written."""

    ingested: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    skipped: int = 0
    chunks: int = 0


_search: list[Callable[[SearchEvent], None]] = []
_ingest: list[Callable[[IngestEvent], None]] = []


def _add(listeners: list[Any], listener: Any) -> Callable[[], None]:
    if listener not in listeners:
        listeners.append(listener)

    def remove() -> None:
        if listener in listeners:
            listeners.remove(listener)

    return remove


def on_search(listener: Callable[[SearchEvent], None]) -> Callable[[], None]:
    """Call ``listener`` after every search of this process; returns a function that unregisters it."""
    return _add(_search, listener)


def on_ingest(listener: Callable[[IngestEvent], None]) -> Callable[[], None]:
    """Call ``listener`` after every ingest of this process; returns a function that unregisters it."""
    return _add(_ingest, listener)


def _emit(listeners: list[Callable[[Any], None]], event: Any) -> None:
    for listener in tuple(listeners):
        try:
            listener(event)
        except Exception:  # noqa: BLE001 - observing must never break the observed operation
            log.exception("observer %r failed", listener)


def search_finished(event: SearchEvent) -> None:
    """Report a search to the listeners."""
    if _search:
        _emit(_search, event)


def ingest_finished(event: IngestEvent) -> None:
    """Report an ingest to the listeners."""
    if _ingest:
        _emit(_ingest, event)
