"""``graphrag serve`` as a child process for the tests that need a real HTTP server and worker processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from graphrag.config import Settings

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port that was free on loopback a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A running ``graphrag serve``: its base URL, process, log file and environment."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    #: Worker processes still alive after the server stopped (filled in on exit; killed by then).
    left_running: list[psutil.Process] = field(default_factory=list)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


@contextmanager
def serve_process(settings: Settings, log: Path, *, workers: int, env: dict[str, str] | None = None,
                  ready_headers: dict[str, str] | None = None, host: str = "127.0.0.1") -> Iterator[Served]:
    """Start ``graphrag serve --workers N`` for the settings' home on a free port, wait for ``/ready``,
    and stop it (workers too) on exit. ``env`` adds to (or, with value "", removes from) the environment."""
    port = free_port()
    full_env = {**os.environ, "GRAPHRAG_HOME": str(settings.home_dir), "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    for key, value in (env or {}).items():
        if value == "":
            full_env.pop(key, None)
        else:
            full_env[key] = value
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "graphrag.cli", "serve", "--host", host,
                                 "--port", str(port), "--workers", str(workers)],
                                cwd=REPO, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    served = Served(f"http://127.0.0.1:{port}", proc, log, full_env)
    try:
        deadline = time.monotonic() + 300  # every worker loads the models on a shared machine
        while True:
            assert proc.poll() is None, served.log_tail()
            try:
                if httpx.get(f"{served.url}/ready", timeout=5, headers=ready_headers).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "not ready in time:\n" + served.log_tail()
            time.sleep(1)
        yield served
    finally:
        children = psutil.Process(proc.pid).children(recursive=True) if proc.poll() is None else []
        proc.terminate()  # the supervisor stops its workers
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=30)
        for child in alive:
            child.kill()
        served.left_running = list(alive)
