"""``graphrag serve --workers N``: N API processes on one port, against the real stores."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from graphrag.api.server import default_workers, worker_sockets
from graphrag.cli import build_parser
from graphrag.config import Settings
from tests.serving import free_port, serve_process

REPO = Path(__file__).resolve().parents[2]
#: An access-log line of a search, with the process id of the worker that wrote it.
ACCESS = re.compile(r"^INFO - [^\n]+? - (\d+) - graphrag\.api\.access - \w+ - POST /search 200", re.M)


@pytest.fixture
def two_workers(settings: Settings, services: Any, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """``graphrag serve --workers 2`` as a child process on a free port; stopped (workers too) after."""
    with serve_process(settings, tmp_path / "serve.log", workers=2) as served:
        yield served.url, served.proc, served.log
    assert not served.left_running, f"workers left running: {served.left_running}"


def test_each_worker_listens_on_a_socket_of_its_own() -> None:
    """One SO_REUSEPORT socket per worker on one port (port 0: the first picks it, the rest join it)."""
    sockets = worker_sockets("127.0.0.1", 0, 3)
    assert sockets is not None
    try:
        ports = {s.getsockname()[1] for s in sockets}
        assert len(sockets) == 3 and len(ports) == 1 and 0 not in ports
        assert all(s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) for s in sockets)
        assert all(s.get_inheritable() for s in sockets)  # the worker processes receive them
        # Another program's socket on the port (no SO_REUSEPORT) keeps the server from starting.
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            with pytest.raises(SystemExit):
                worker_sockets("127.0.0.1", taken.getsockname()[1], 2)
    finally:
        for s in sockets:
            s.close()


def test_serve_with_two_workers_shares_one_port(two_workers: tuple[str, subprocess.Popen[bytes], Path],
                                                collection: str) -> None:
    url, proc, log = two_workers
    assert httpx.get(f"{url}/health", timeout=10).json()["status"] == "ok"
    posted = httpx.post(f"{url}/documents", timeout=120, json={
        "text": "# Marie Curie\n\nMarie Curie discovered polonium and radium in Paris.",
        "source": "curie.md", "collection": collection})
    assert posted.status_code == 201, posted.text
    body = {"query": "Who discovered polonium?", "limit": 3, "collections": [collection]}

    def search(_: int) -> dict[str, Any]:
        r = httpx.post(f"{url}/search", json=body, timeout=120)
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]

    workers = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    with ThreadPoolExecutor(8) as pool:
        # 16 connections opened at once: the kernel spreads them over the workers' own sockets
        # (SO_REUSEPORT), so that all land on one worker about once in 30,000 runs.
        answers = list(pool.map(search, range(16)))
    # Every answer finds the document, whichever worker stored it: they share the stores.
    assert all(a["results"] and a["results"][0]["source"] == "curie.md" for a in answers)
    served = {int(m.group(1)) for m in ACCESS.finditer(log.read_text(errors="replace"))}
    # Each worker writes its process id on its access-log lines: two distinct worker processes answered.
    assert len(served) == 2, log.read_text(errors="replace")[-3000:]
    assert proc.pid not in served and served <= workers, (served, workers)

    # Documents posted with Prefer: respond-async are queued in PostgreSQL and each is run once, by
    # whichever worker process claims it first.
    def post_async(n: int) -> str:
        r = httpx.post(f"{url}/documents", headers={"Prefer": "respond-async"}, timeout=120, json={
            "text": f"# Note {n}\n\nNote {n} was written in Copenhagen.", "source": f"note-{n}.md",
            "collection": collection})
        assert r.status_code == 202, r.text
        return r.headers["location"]  # type: ignore[no-any-return]

    with ThreadPoolExecutor(4) as pool:
        locations = list(pool.map(post_async, range(4)))
    deadline = time.monotonic() + 300
    jobs: list[dict[str, Any]] = []
    while len(jobs) < len(locations):
        jobs = [j for j in (httpx.get(f"{url}{loc}", timeout=60).json() for loc in locations)
                if j["status"] in ("done", "failed")]
        assert time.monotonic() < deadline, jobs
        time.sleep(0.5)
    assert all(j["status"] == "done" and j["attempts"] == 1 for j in jobs), jobs
    assert len({j["result"]["id"] for j in jobs}) == 4


def test_worker_count_follows_the_setting_or_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRAG_API_WORKERS", "3")
    assert default_workers(Settings()) == 3
    monkeypatch.delenv("GRAPHRAG_API_WORKERS")
    assert default_workers(Settings()) == len(os.sched_getaffinity(0))
    assert build_parser().parse_args(["serve", "--workers", "2"]).workers == 2
    for bad in ("0", "many"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", "--workers", bad])


def test_bad_worker_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from graphrag.cli import main

    monkeypatch.setenv("GRAPHRAG_API_WORKERS", "0")
    assert main(["serve"]) == 2
    assert "GRAPHRAG_API_WORKERS" in capsys.readouterr().err


def test_serve_with_workers_and_no_store_is_one_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The parent prepares the stores before any worker starts: unreachable, it says so and exits."""
    from graphrag.cli import main

    monkeypatch.setenv("GRAPHRAG_POSTGRES_DSN", f"postgresql://nobody@127.0.0.1:{free_port()}/none")
    monkeypatch.setenv("GRAPHRAG_NEO4J_URI", f"bolt://127.0.0.1:{free_port()}")
    assert main(["serve", "--workers", "2", "--port", str(free_port())]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot connect to PostgreSQL" in err[0]
