"""Local service lifecycle against real processes: up, status, Browser, down, taken ports, stale pids."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrag.config import Settings
from graphrag.services import local_neo4j, manager
from graphrag.services.manager import Endpoints


@pytest.fixture
def held_ports() -> Iterator[list[int]]:
    """Three ports with something listening on them, so a service that wants them must pick others."""
    socks = []
    for _ in range(3):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        socks.append(sock)
    yield [s.getsockname()[1] for s in socks]
    for sock in socks:
        sock.close()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
        return response.read().decode()


def test_lifecycle_with_taken_ports_and_stale_pid_files(
    tmp_path: Path, held_ports: list[int], monkeypatch: pytest.MonkeyPatch, services: Endpoints
) -> None:
    pg_port, bolt_port, http_port = held_ports
    settings = Settings(
        home=tmp_path / "home", postgres_port=pg_port, neo4j_bolt_port=bolt_port, neo4j_http_port=http_port,
        neo4j_heap="512m", neo4j_pagecache="128m",
    )
    try:
        status = manager.up(settings)
        pg, neo = status["postgres"], status["neo4j"]
        assert pg["running"] and neo["running"]
        assert pg["version"].startswith("18.") and pg["pgvector"].startswith("0.8.")
        assert neo["version"].startswith("5.26.") and neo["edition"] == "community"
        assert pg["data_dir"].startswith(str(tmp_path)) and neo["data_dir"].startswith(str(tmp_path))
        assert f":{pg_port}/" not in pg["dsn"]
        assert not neo["bolt_uri"].endswith(f":{bolt_port}")
        assert f":{http_port}" not in neo["http_url"]
        assert "password" not in pg["dsn"] and "@" in pg["dsn"]
        assert "<title>Neo4j Browser</title>" in _get(neo["browser_url"])

        # Idempotent: a second up keeps the same servers and ports.
        assert manager.up(settings) == status
        state = manager.status(settings)
        assert state == status

        # The generated secrets are private to the user.
        for name in ("neo4j_password", "postgres_password"):
            assert (settings.home_dir / "secrets" / name).stat().st_mode & 0o077 == 0

        stopped = manager.down(settings)
        assert stopped == {"postgres": True, "neo4j": True}
        after = manager.status(settings)
        assert not after["postgres"]["running"] and not after["neo4j"]["running"]

        # Stale pid files (a reused pid that is not Neo4j; a postmaster.pid of a dead process)
        # must not stop the next start, and the cached jars mean Maven is never needed again.
        (settings.home_dir / "neo4j" / "run" / "neo4j.pid").write_text(str(os.getpid()))
        (settings.home_dir / "postgres" / "data" / "postmaster.pid").write_text("999999\n")
        real_which = local_neo4j.shutil.which
        monkeypatch.setattr(local_neo4j.shutil, "which", lambda n: None if n == "mvn" else real_which(n))
        again = manager.up(settings)
        assert again["postgres"]["running"] and again["neo4j"]["running"]
    finally:
        manager.down(settings)


def test_external_servers_are_used_and_nothing_local_starts(tmp_path: Path, services: Endpoints) -> None:
    settings = Settings(
        home=tmp_path / "ext",
        postgres_dsn=services.postgres_dsn,
        neo4j_uri=services.neo4j_uri,
        neo4j_password=services.neo4j_password,
    )
    status = manager.up(settings)
    assert status["postgres"]["running"] and status["neo4j"]["running"]
    assert status["postgres"]["version"].startswith("18.")
    assert not (settings.home_dir / "postgres").exists()
    assert not (settings.home_dir / "neo4j").exists()
    assert manager.down(settings) == {"postgres": False, "neo4j": False}


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphrag.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_wrong_neo4j_password_is_one_clear_line(tmp_path: Path, services: Endpoints) -> None:
    env = {
        **os.environ,
        "GRAPHRAG_HOME": str(tmp_path),
        "GRAPHRAG_POSTGRES_DSN": services.postgres_dsn,
        "GRAPHRAG_NEO4J_URI": services.neo4j_uri,
        "GRAPHRAG_NEO4J_PASSWORD": "definitely-wrong",
    }
    result = _cli(env, "status", "--json")
    assert result.returncode == 1
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert "GRAPHRAG_NEO4J_PASSWORD" in lines[0]
    assert "definitely-wrong" not in result.stderr and "Traceback" not in result.stderr


def test_invalid_setting_is_one_clear_line(tmp_path: Path) -> None:
    env = {**os.environ, "GRAPHRAG_HOME": str(tmp_path), "GRAPHRAG_POSTGRES_PORT": "not-a-port"}
    result = _cli(env, "services", "status")
    assert result.returncode == 2
    assert "GRAPHRAG_POSTGRES_PORT" in result.stderr and "Traceback" not in result.stderr


def test_services_status_json_contract(services: Endpoints, settings: Settings) -> None:
    env = {**os.environ, "GRAPHRAG_HOME": str(settings.home_dir)}
    result = _cli(env, "services", "status", "--json")
    assert result.returncode == 0, result.stderr
    import json

    data = json.loads(result.stdout)
    assert set(data["postgres"]) >= {"running", "dsn", "version", "pgvector", "data_dir"}
    assert set(data["neo4j"]) >= {"running", "bolt_uri", "http_url", "browser_url", "version", "edition", "data_dir"}
    assert data["postgres"]["running"] is True and data["neo4j"]["running"] is True
