"""Who is calling and what they may touch: hashed API keys scoped to collections and to read or
read-write access, and a per-key request rate limit.

``GRAPHRAG_API_KEYS`` holds either a comma-separated list of keys (or ``sha256:<hex>`` digests of
keys), each with full access, or a JSON list of objects for scoped keys::

    [{"name": "team-a-reader", "sha256": "<hex>", "collections": ["team-a"], "access": "read"},
     {"name": "ingest-bot", "key": "<plain key>", "access": "read-write"}]

Only SHA-256 digests are kept in memory; names (never keys) appear in logs. ``graphrag keys new``
makes a random key and prints its entry.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from graphrag.errors import ConfigurationError, Forbidden, InvalidInput, NotFound
from graphrag.models import is_collection_name

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
ACCESS = ("read", "read-write")


@dataclass(frozen=True)
class Principal:
    """The caller of one request: a key's name, the collections it may see (None = all) and whether
    it may write (add or delete documents)."""

    name: str
    collections: frozenset[str] | None = None
    write: bool = True

    def readable(self, requested: Sequence[str] | None) -> tuple[str, ...] | None:
        """The collections a read may touch: the requested ones when all are in scope, the key's
        own when none are requested, ``None`` (everything) for an unscoped key."""
        if self.collections is None:
            return tuple(requested) if requested else None
        if not requested:
            return tuple(sorted(self.collections))
        outside = [c for c in requested if c not in self.collections]
        if outside:
            raise Forbidden(f"API key {self.name!r} may not read collection {outside[0]!r}")
        return tuple(requested)

    def can_see(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def check_visible(self, collection: str, what: str) -> None:
        """Out-of-scope objects look exactly like missing ones: no existence leak."""
        if not self.can_see(collection):
            raise NotFound(what)

    def check_write(self, collection: str) -> None:
        """Adding or deleting in ``collection`` needs a read-write key scoped to it."""
        if not self.write:
            raise Forbidden(f"API key {self.name!r} is read-only")
        if not self.can_see(collection):
            raise Forbidden(f"API key {self.name!r} may not write to collection {collection!r}")


#: Anyone, when no API keys are configured.
OPEN = Principal("anonymous")


@dataclass(frozen=True)
class ApiKey:
    digest: bytes = field(repr=False)
    principal: Principal


def digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "replace")).digest()


def _entry_digest(entry: dict[str, object], where: str) -> bytes:
    if "sha256" in entry:
        value = str(entry["sha256"]).removeprefix("sha256:")
        if not _HEX64.match(value):
            raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: sha256 must be 64 hex digits")
        return bytes.fromhex(value)
    if isinstance(entry.get("key"), str) and entry["key"]:
        return digest(str(entry["key"]))
    raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: give 'sha256' (digest of the key) or 'key'")


def _scoped(raw: str) -> list[ApiKey]:
    try:
        entries = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"GRAPHRAG_API_KEYS is not valid JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(entries, list):
        raise ConfigurationError("GRAPHRAG_API_KEYS as JSON must be a list of key objects")
    keys = []
    for n, entry in enumerate(entries, 1):
        where = f"entry {n}"
        if not isinstance(entry, dict):
            raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: must be an object")
        unknown = set(entry) - {"name", "key", "sha256", "collections", "access"}
        if unknown:
            raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: unknown field {sorted(unknown)[0]!r}")
        name = str(entry.get("name") or f"key-{n}")
        if not _NAME_RE.match(name):
            raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: invalid name {name!r}")
        access = entry.get("access", "read-write")
        if access not in ACCESS:
            raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: access must be 'read' or 'read-write'")
        collections = entry.get("collections")
        if collections is not None:
            if not isinstance(collections, list) or not collections or not all(
                    is_collection_name(c) for c in collections):
                raise ConfigurationError(f"GRAPHRAG_API_KEYS {where}: collections must be a non-empty list of names")
            collections = frozenset(collections)
        keys.append(ApiKey(_entry_digest(entry, where), Principal(name, collections, access == "read-write")))
    return keys


def parse_keys(raw: str | None) -> list[ApiKey]:
    """The configured keys as digests with their scope (see the module docstring for the forms)."""
    text = (raw or "").strip()
    if text.startswith("["):
        return _scoped(text)
    keys = []
    for n, entry in enumerate((e.strip() for e in text.split(",")), 1):
        if not entry:
            continue
        if entry.startswith("sha256:") and _HEX64.match(entry[7:]):
            keys.append(ApiKey(bytes.fromhex(entry[7:]), Principal(f"key-{n}")))
        else:
            keys.append(ApiKey(digest(entry), Principal(f"key-{n}")))
    return keys


def identify(keys: Iterable[ApiKey], presented: str) -> Principal | None:
    """The principal of a presented key, or None. Every stored digest is compared, so timing does
    not reveal which one (or whether any) matched."""
    given = digest(presented)
    found: Principal | None = None
    for key in keys:
        if hmac.compare_digest(given, key.digest):
            found = key.principal
    return found


def new_key(name: str, collections: Sequence[str] | None, read_only: bool) -> tuple[str, dict[str, object]]:
    """A random key and the entry (with its digest, not the key) to put in GRAPHRAG_API_KEYS."""
    if not _NAME_RE.match(name):
        raise InvalidInput(f"invalid key name {name!r}: letters, digits, '_', '.', '-'")
    for c in collections or ():
        if not is_collection_name(c):
            raise InvalidInput(f"invalid collection name {c!r}")
    key = "grk_" + secrets.token_urlsafe(32)
    entry: dict[str, object] = {"name": name, "sha256": digest(key).hex(),
                                "access": "read" if read_only else "read-write"}
    if collections:
        entry["collections"] = sorted(set(collections))
    return key, entry


class RateLimiter:
    """A token bucket per caller: ``per_minute`` requests on average, bursts up to ``burst``."""

    def __init__(self, per_minute: float, burst: int | None = None, *, max_callers: int = 100_000) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(burst or max(1, math.ceil(per_minute)))
        self.max_callers = max_callers
        self._buckets: dict[str, tuple[float, float]] = {}

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, caller: str, now: float | None = None) -> float:
        """0 when the request may go ahead, else the seconds until it could."""
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.get(caller, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._remember(caller, tokens - 1.0, now)
            return 0.0
        self._remember(caller, tokens, now)
        return (1.0 - tokens) / self.rate

    def _remember(self, caller: str, tokens: float, now: float) -> None:
        if caller not in self._buckets and len(self._buckets) >= self.max_callers:
            # Unbounded distinct callers (e.g. spoofed client addresses) must not grow memory without end.
            self._buckets.clear()
        self._buckets[caller] = (tokens, now)
