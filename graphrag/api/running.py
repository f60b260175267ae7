"""Where a running ``graphrag serve`` can be found: ``<home>/serve.json``, written when it starts and
removed when it stops, so that commands of the same home (``graphrag search``) can ask it instead of
loading the models themselves.

The record holds the URL, the serving process id, whether the API wants a key, and a fingerprint of
the settings that shape an answer: a server started with other settings (another embedding model,
another database) does not answer for this command. A record whose process is gone is stale and ignored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from graphrag.config import Settings

log = logging.getLogger(__name__)

RECORD = "serve.json"
#: Settings that change how the server runs, not what a search answers.
_NOT_ANSWER_SHAPING = frozenset({
    "api_host", "api_port", "api_workers", "api_keys", "api_key", "rate_limit_per_minute", "rate_limit_burst",
    "cors_origins", "max_file_mb", "outbox_interval_s", "postgres_pool_min", "postgres_pool_max",
    "service_start_timeout",
})


@dataclass(frozen=True)
class ServerRecord:
    """A ``graphrag serve`` process and where it answers."""

    url: str
    pid: int
    keys: bool
    fingerprint: str


def record_path(settings: Settings) -> Path:
    return settings.home_dir / RECORD


def fingerprint(settings: Settings) -> str:
    """A digest of the settings that shape search answers (no secret goes into it)."""
    data: dict[str, Any] = settings.model_dump(mode="json", exclude=set(_NOT_ANSWER_SHAPING))
    data["home"] = str(settings.home_dir)
    if settings.postgres_dsn is not None:  # which database, without its password
        parts = urlsplit(settings.postgres_dsn.get_secret_value())
        host = parts.hostname or ""
        data["postgres_dsn"] = urlunsplit((parts.scheme, f"{parts.username or ''}@{host}:{parts.port or ''}",
                                           parts.path, "", ""))
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:32]


def client_url(host: str, port: int) -> str:
    """The URL a local client reaches a server bound to ``host`` at (a wildcard address means loopback)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def write_record(settings: Settings, host: str, port: int, *, keys: bool) -> ServerRecord:
    """Record this process as the home's server (atomically: a reader never sees half a file)."""
    record = ServerRecord(url=client_url(host, port), pid=os.getpid(), keys=keys, fingerprint=fingerprint(settings))
    path = record_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{RECORD}.{os.getpid()}")
    tmp.write_text(json.dumps(asdict(record)) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return record


def remove_record(settings: Settings, record: ServerRecord) -> None:
    """Remove the record if it is still this one (another server of the home may have replaced it)."""
    path = record_path(settings)
    try:
        if read_record(path) == record:
            path.unlink()
    except OSError as exc:
        log.warning("could not remove %s: %s", path, exc)


def read_record(path: Path) -> ServerRecord | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerRecord(url=str(data["url"]), pid=int(data["pid"]), keys=bool(data["keys"]),
                            fingerprint=str(data["fingerprint"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_server(settings: Settings) -> ServerRecord | None:
    """The home's running server when one is recorded, its process is alive and it runs with the same
    answer-shaping settings as ``settings``; else None. (Whether it answers is the caller's check.)"""
    record = read_record(record_path(settings))
    if record is None:
        return None
    if not _alive(record.pid):
        log.debug("ignoring %s: process %d is gone", RECORD, record.pid)
        return None
    if record.fingerprint != fingerprint(settings):
        log.debug("ignoring the server at %s: it runs with other settings", record.url)
        return None
    return record


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
