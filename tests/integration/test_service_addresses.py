"""Services that keep their address: recorded ports reused, one `services up` at a time per home, and a
running API that follows a server which came back on another port. On servers of this module's own
(a separate home), so killing them never disturbs the rest of the suite."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from graphrag.config import Settings
from graphrag.errors import ServiceStartError
from graphrag.services import manager
from graphrag.services.common import home_lock
from graphrag.services.local_neo4j import ENTRY_POINT, LocalNeo4j
from graphrag.services.local_postgres import LocalPostgres
from tests.conftest import ApiServer
from tests.integration.test_faults import kill_neo4j, kill_postgres

pytestmark = pytest.mark.timeout(1200)


def _listener(port: int = 0) -> socket.socket:
    """Something else listening on ``port`` (a free one when 0), as another local server would."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(8)
    return sock


@contextmanager
def occupied(port: int) -> Iterator[None]:
    sock = _listener(port)
    try:
        yield
    finally:
        sock.close()


@dataclass
class Home:
    """A home whose configured ports are held by other listeners until :meth:`release`."""

    settings: Settings
    held: list[socket.socket] = field(default_factory=list)

    def release(self) -> None:
        for sock in self.held:
            sock.close()
        self.held.clear()

    def env(self) -> dict[str, str]:
        s = self.settings
        return {**os.environ, "GRAPHRAG_HOME": str(s.home_dir), "GRAPHRAG_POSTGRES_PORT": str(s.postgres_port),
                "GRAPHRAG_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port), "GRAPHRAG_NEO4J_HTTP_PORT": str(s.neo4j_http_port),
                "GRAPHRAG_NEO4J_HEAP": s.neo4j_heap, "GRAPHRAG_NEO4J_PAGECACHE": s.neo4j_pagecache,
                "GRAPHRAG_POSTGRES_SHARED_BUFFERS": s.postgres_shared_buffers}


@pytest.fixture(scope="module")
def home() -> Iterator[Home]:
    if os.environ.get("GRAPHRAG_POSTGRES_DSN") or os.environ.get("GRAPHRAG_NEO4J_URI"):
        pytest.skip("these tests start and kill local servers; external servers are configured")
    # Not under pytest's basetemp: concurrent pytest sessions prune old basetemps, and a home deleted
    # under running servers would leave them running.
    folder = Path(tempfile.mkdtemp(prefix="graphrag-addresses-"))
    held = [_listener() for _ in range(3)]
    pg, bolt, http = (s.getsockname()[1] for s in held)
    settings = Settings(home=folder, postgres_port=pg, neo4j_bolt_port=bolt, neo4j_http_port=http,
                        neo4j_heap="512m", neo4j_pagecache="128m", postgres_shared_buffers="128MB")
    h = Home(settings, held)
    try:
        yield h
    finally:
        manager.down(settings)
        h.release()
        shutil.rmtree(folder, ignore_errors=True)


def recorded(settings: Settings) -> tuple[int | None, int | None, int | None]:
    state = json.loads((settings.home_dir / "services.json").read_text())
    return (state.get("postgres", {}).get("port"), state.get("neo4j", {}).get("bolt_port"),
            state.get("neo4j", {}).get("http_port"))


def server_processes(settings: Settings) -> tuple[list[psutil.Process], list[psutil.Process]]:
    """The Neo4j JVMs and PostgreSQL postmasters running on this home's data."""
    neo_root, pg_data = str(settings.home_dir / "neo4j"), str(settings.home_dir / "postgres" / "data")
    neo, pg = [], []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if ENTRY_POINT in cmd and f"--home-dir={neo_root}" in cmd:
            neo.append(proc)
        elif cmd and cmd[0].endswith("/postgres") and "-D" in cmd and pg_data in cmd:
            pg.append(proc)
    return neo, pg


def test_home_lock_lets_one_holder_in_and_names_it(tmp_path: Path) -> None:
    entered = threading.Event()
    leave = threading.Event()

    def holder() -> None:
        with home_lock(tmp_path, timeout=5):
            entered.set()
            leave.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert entered.wait(10)
        with pytest.raises(ServiceStartError, match=f"pid {os.getpid()}"):
            with home_lock(tmp_path, timeout=0.5):
                pass
    finally:
        leave.set()
        thread.join(10)
    with home_lock(tmp_path, timeout=5):  # released by its holder: free again
        assert (tmp_path / "services.lock").read_text() == str(os.getpid())


def test_two_concurrent_ups_start_one_pair_and_keep_the_state(home: Home) -> None:
    cmd = [sys.executable, "-m", "graphrag.cli", "services", "up", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=home.env())
             for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
    first, second = (json.loads(out) for out, _ in outs)
    assert first["postgres"]["running"] and first["neo4j"]["running"]
    assert first == second  # the later one found the pair the earlier one started

    neo, pg = server_processes(home.settings)
    assert len(neo) == 1 and len(pg) == 1, (neo, pg)
    state = json.loads((home.settings.home_dir / "services.json").read_text())
    assert state["neo4j"]["pid"] == neo[0].pid and state["postgres"]["pid"] == pg[0].pid
    assert first["neo4j"]["bolt_uri"] == f"bolt://127.0.0.1:{state['neo4j']['bolt_port']}"
    assert f"@127.0.0.1:{state['postgres']['port']}/" in first["postgres"]["dsn"]
    # The configured ports were taken, so free ones were picked and recorded.
    s = home.settings
    assert recorded(s) != (s.postgres_port, s.neo4j_bolt_port, s.neo4j_http_port)


def test_up_after_down_reuses_the_recorded_ports(home: Home) -> None:
    s = home.settings
    manager.up(s)
    ports = recorded(s)
    assert None not in ports and ports[1] != s.neo4j_bolt_port  # the configured ones are held
    assert manager.down(s) == {"postgres": True, "neo4j": True}
    assert recorded(s) == ports  # down keeps the ports recorded
    home.release()  # the configured ports are free now, and the recorded ones still win
    status = manager.up(s)
    assert recorded(s) == ports
    assert status["neo4j"]["bolt_uri"] == f"bolt://127.0.0.1:{ports[1]}"
    assert status["neo4j"]["http_url"] == f"http://127.0.0.1:{ports[2]}"
    assert f"@127.0.0.1:{ports[0]}/" in status["postgres"]["dsn"]


def _pending(c: httpx.Client) -> int:
    return int(c.get("/stats").json()["graph_outbox"]["pending"])


async def _until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


async def test_running_api_follows_servers_that_come_back_on_other_ports(home: Home, models: object) -> None:
    s = home.settings
    await asyncio.to_thread(manager.up, s)
    old_bolt = LocalNeo4j(s).ports()[0]  # type: ignore[index]
    old_pg = LocalPostgres(s).running_port()
    assert old_pg
    collection = "follow"
    with ApiServer(s, models) as api, httpx.Client(base_url=api.url, timeout=60) as c:
        r = c.post("/documents", json={"text": "# Kyoto\n\nKeiko Tanaka studied at Kyoto University.",
                                       "source": "kyoto.md", "collection": collection})
        assert r.status_code == 201, r.text

        # Neo4j dies, and something else takes its Bolt port before it is brought back.
        kill_neo4j(s)
        with occupied(old_bolt):
            r = c.post("/documents", json={"text": "# Osaka\n\nKenji Mori worked in Osaka.", "source": "osaka.md",
                                           "collection": collection})
            assert r.status_code == 201, r.text  # ingestion goes on; the graph write waits in the outbox
            assert _pending(c) >= 1
            await asyncio.to_thread(manager.up, s)
            new_bolt = LocalNeo4j(s).ports()[0]  # type: ignore[index]
            assert new_bolt != old_bolt

            # The same API process drains its outbox into the server on its new port...
            await _until(lambda: _pending(c) == 0, 300, "the outbox to drain")
            # ...and answers graph searches from it again (the first ones may outlast the leg timeout
            # while the fresh server warms up on a loaded machine).
            graph = {"query": "Where did Kenji Mori work?", "mode": "graph", "collections": [collection], "limit": 5}
            answers: list[dict[str, Any]] = []

            def graph_ok() -> bool:
                r = c.post("/search", json=graph)
                assert r.status_code == 200, r.text
                answers.append(r.json())
                assert answers[-1]["legs"]["graph"]["status"] in ("ok", "timeout"), answers[-1]["legs"]
                return bool(answers[-1]["legs"]["graph"]["status"] == "ok")

            await _until(graph_ok, 180, "a graph search to answer")
            assert any(hit["source"] == "osaka.md" for hit in answers[-1]["results"]), answers[-1]["results"]

        # The same for PostgreSQL: killed, its port taken, brought back elsewhere, followed.
        kill_postgres(s)
        with occupied(old_pg):
            await asyncio.to_thread(manager.up, s)
            assert LocalPostgres(s).running_port() != old_pg
            query = {"query": "Where did Keiko Tanaka study?", "collections": [collection], "limit": 3,
                     "mode": "keyword"}
            await _until(lambda: c.post("/search", json=query).status_code == 200, 120, "PostgreSQL searches")
            assert c.post("/search", json=query).json()["results"][0]["source"] == "kyoto.md"
            r = c.post("/documents", json={"text": "# Nara\n\nDeer live in Nara.", "source": "nara.md",
                                           "collection": collection})
            assert r.status_code == 201, r.text
