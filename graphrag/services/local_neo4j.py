"""Local Neo4j 5.26 Community, run on Java 17 as a real server from jars resolved by Maven.

Layout under ``$GRAPHRAG_HOME/neo4j``: ``conf/neo4j.conf`` (rewritten at each start), ``data/``,
``logs/`` (neo4j.log, debug.log, console.log), ``run/neo4j.pid``. The jars are cached once per
version in ``settings.neo4j_jars_dir`` (default ``~/.cache/graphrag/neo4j-<version>``); a marker file
records a complete copy so later starts never touch the network.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from graphrag.config import Settings
from graphrag.errors import ConfigurationError, ServiceStartError
from graphrag.services.common import (
    StateFile,
    choose_port,
    listens_on,
    process_alive,
    read_or_create_secret,
    tail,
    wait_until,
)

log = logging.getLogger(__name__)

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
POM = Path(__file__).with_name("neo4j-pom.xml")
DEFAULT_PASSWORD = "neo4j"  # what a fresh Neo4j accepts once, before it forces a change


def _jvm_options(settings: Settings) -> list[str]:
    return [
        f"-Xms{settings.neo4j_heap}",
        f"-Xmx{settings.neo4j_heap}",
        "-XX:+UseG1GC",
        "-XX:+ExitOnOutOfMemoryError",
        "-XX:-OmitStackTraceInFastThrow",
        "-Djdk.tls.ephemeralDHKeySize=2048",
        "-Dio.netty.tryReflectionSetAccessible=true",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
    ]


class LocalNeo4j:
    """Start, stop and describe the local Neo4j of one ``GRAPHRAG_HOME``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.home_dir / "neo4j"
        self.conf_dir = self.root / "conf"
        self.data_dir = self.root / "data"
        self.logs_dir = self.root / "logs"
        self.run_dir = self.root / "run"
        self.pid_file = self.run_dir / "neo4j.pid"
        self.password_file = settings.home_dir / "secrets" / "neo4j_password"
        self.state = StateFile(settings.home_dir)

    # -- jars -----------------------------------------------------------------------------------
    def _marker(self) -> str:
        digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:16]
        return f"{self.settings.neo4j_version}/{self.settings.neo4j_browser_version}/{digest}"

    def ensure_jars(self) -> Path:
        """Resolve the server jars from Maven Central once; later calls only check the marker."""
        lib = self.settings.neo4j_jars_dir / "lib"
        marker = self.settings.neo4j_jars_dir / "complete"
        if marker.exists() and marker.read_text().strip() == self._marker():
            return lib
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ConfigurationError("Maven (mvn) is needed once to fetch the Neo4j jars; install maven")
        tmp = self.settings.neo4j_jars_dir / "lib.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        log.info("resolving Neo4j %s jars from Maven Central into %s", self.settings.neo4j_version, lib)
        result = subprocess.run(
            [
                mvn, "-q", "-B", "-f", str(POM),
                f"-Dneo4j.version={self.settings.neo4j_version}",
                f"-Dneo4j.browser.version={self.settings.neo4j_browser_version}",
                "dependency:copy-dependencies",
                f"-DoutputDirectory={tmp}",
                "-DincludeScope=runtime",
            ],
            capture_output=True, text=True, check=False, timeout=1800,
        )
        if result.returncode != 0 or not any(tmp.glob("neo4j-server-*.jar")):
            raise ServiceStartError(
                "could not resolve the Neo4j jars with Maven: " + (result.stdout + result.stderr).strip()[-800:]
            )
        shutil.rmtree(lib, ignore_errors=True)
        tmp.replace(lib)
        marker.write_text(self._marker())
        return lib

    # -- secrets --------------------------------------------------------------------------------
    def password(self) -> str:
        """The configured password, or the generated one kept under ``$GRAPHRAG_HOME/secrets``."""
        if self.settings.neo4j_password is not None:
            return self.settings.neo4j_password.get_secret_value()
        return read_or_create_secret(self.password_file)

    # -- state ----------------------------------------------------------------------------------
    def _pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def _alive(self) -> bool:
        return process_alive(self._pid(), marker=ENTRY_POINT) and process_alive(
            self._pid(), marker=str(self.root)
        )

    def recorded_ports(self) -> tuple[int | None, int | None]:
        """The (bolt, http) ports last used by this home, running or not (kept by ``stop``)."""
        entry = self.state.read().get("neo4j", {})
        bolt, http = entry.get("bolt_port"), entry.get("http_port")
        return (int(bolt) if bolt else None), (int(http) if http else None)

    def ports(self) -> tuple[int, int] | None:
        """The (bolt, http) ports of the running server of this home, or None."""
        entry = self.state.read().get("neo4j", {})
        if self._alive() and entry.get("bolt_port") and entry.get("http_port"):
            return int(entry["bolt_port"]), int(entry["http_port"])
        return None

    def _record_stopped(self) -> None:
        # The ports stay recorded (without a pid) so the next start comes back on them when free.
        bolt, http = self.recorded_ports()
        self.state.update("neo4j", {"bolt_port": bolt, "http_port": http} if bolt and http else None)

    def _write_conf(self, bolt: int, http: int) -> None:
        for folder in (self.conf_dir, self.data_dir, self.logs_dir, self.run_dir, self.root / "plugins"):
            folder.mkdir(parents=True, exist_ok=True)
        lines = [
            "# Managed by graphrag services up; edits are overwritten.",
            "server.default_listen_address=127.0.0.1",
            "server.default_advertised_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{bolt}",
            f"server.bolt.advertised_address=127.0.0.1:{bolt}",
            f"server.http.listen_address=127.0.0.1:{http}",
            f"server.http.advertised_address=127.0.0.1:{http}",
            "server.https.enabled=false",
            "dbms.security.auth_enabled=true",
            f"server.directories.data={self.data_dir}",
            f"server.directories.logs={self.logs_dir}",
            f"server.directories.plugins={self.root / 'plugins'}",
            f"server.directories.run={self.run_dir}",
            f"server.memory.heap.initial_size={self.settings.neo4j_heap}",
            f"server.memory.heap.max_size={self.settings.neo4j_heap}",
            f"server.memory.pagecache.size={self.settings.neo4j_pagecache}",
            # Keep transaction logs small on a laptop-sized machine.
            "db.tx_log.rotation.retention_policy=2 days 1G",
            "dbms.usage_report.enabled=false",
            "",
        ]
        (self.conf_dir / "neo4j.conf").write_text("\n".join(lines), encoding="utf-8")

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, avoid_ports: set[int] | None = None) -> tuple[int, int]:
        """Start the server (idempotent), set its password on first start, return (bolt, http)."""
        ports = self.ports()
        if ports and listens_on(self._pid(), ports[0]):
            return ports
        if self._alive():
            self.stop()  # ours, but not serving its port (it lost a bind race): start over
        if shutil.which("java") is None:
            raise ConfigurationError("Java 17 (java on PATH) is needed to run the local Neo4j")
        lib = self.ensure_jars()
        avoid = set(avoid_ports or ())
        # Another server (another home's, or anything else) can take a port between our check and the JVM's
        # bind a few seconds later; then come up on other free ports instead of failing.
        for attempt in range(3):
            # Where clients last found it first, then the configured port, then any free one.
            last_bolt, last_http = self.recorded_ports() if attempt == 0 else (None, None)
            bolt = choose_port(last_bolt, self.settings.neo4j_bolt_port, avoid=avoid)
            http = choose_port(last_http, self.settings.neo4j_http_port, avoid=avoid | {bolt})
            if self._launch(lib, bolt, http):
                break
            avoid |= {bolt, http}
            log.warning("Neo4j could not bind port %d or %d (taken meanwhile); trying other ports", bolt, http)
        else:
            raise ServiceStartError(f"Neo4j could not bind free ports after 3 attempts (logs in {self.logs_dir})")
        self._ensure_password(bolt)
        return bolt, http

    def _launch(self, lib: Path, bolt: int, http: int) -> bool:
        """Run the server on these ports and wait until it serves; False if it lost a port to someone else."""
        self._write_conf(bolt, http)
        self.pid_file.unlink(missing_ok=True)  # stale: _alive() said no server of ours runs
        log_file = self.logs_dir / "neo4j.log"
        log_size = log_file.stat().st_size if log_file.exists() else 0
        console = (self.logs_dir / "console.log").open("ab")
        cmd = [
            "java", *_jvm_options(self.settings), "-cp", f"{lib}/*", ENTRY_POINT,
            f"--home-dir={self.root}", f"--config-dir={self.conf_dir}",
        ]
        proc = subprocess.Popen(
            cmd, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            cwd=self.root,
        )
        console.close()
        self.pid_file.write_text(str(proc.pid))
        self.state.update("neo4j", {"bolt_port": bolt, "http_port": http, "pid": proc.pid})

        def ready() -> bool:
            if proc.poll() is not None:
                return True  # exited: stop waiting, reported below
            return listens_on(proc.pid, bolt) and self._discovery(http) is not None

        wait_until(ready, self.settings.service_start_timeout, interval=1.0)
        if proc.poll() is None and listens_on(proc.pid, bolt):
            return True
        self._kill(proc.pid)
        self._record_stopped()
        with log_file.open("rb") as handle:
            handle.seek(log_size)
            if b"PortBindException" in handle.read():
                return False
        raise ServiceStartError(
            f"Neo4j did not start (logs in {self.logs_dir}):\n"
            + (tail(log_file, 8) or tail(self.logs_dir / "console.log", 8))
        )

    def _ensure_password(self, bolt: int) -> None:
        from graphrag.stores.neo4j import check_login, set_initial_password

        uri = f"bolt://127.0.0.1:{bolt}"
        wanted = self.password()
        if check_login(uri, self.settings.neo4j_user, wanted):
            return
        if self.settings.neo4j_user == "neo4j" and check_login(uri, "neo4j", DEFAULT_PASSWORD):
            log.info("setting the Neo4j password on first start")
            set_initial_password(uri, "neo4j", DEFAULT_PASSWORD, wanted)
            return
        raise ConfigurationError(
            f"the local Neo4j rejects the password from GRAPHRAG_NEO4J_PASSWORD / {self.password_file}; "
            f"it was set on first start, so use that one (or remove {self.data_dir} to start over)"
        )

    def _kill(self, pid: int, timeout: float = 60) -> None:
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        if not wait_until(lambda: not process_alive(pid), timeout):
            log.warning("Neo4j did not stop within %ss; killing it", timeout)
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            wait_until(lambda: not process_alive(pid), 10)

    def stop(self) -> bool:
        """Stop the server (SIGTERM lets Neo4j check-point and shut down cleanly)."""
        pid = self._pid()
        running = self._alive()
        if running and pid:
            self._kill(pid)
        self.pid_file.unlink(missing_ok=True)
        self._record_stopped()
        return running

    @staticmethod
    def _discovery(http: int) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http}/", timeout=2) as response:  # noqa: S310
                return json.loads(response.read().decode())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def status(self) -> dict[str, Any]:
        ports = self.ports()
        info = self._discovery(ports[1]) if ports else None
        running = info is not None and listens_on(self._pid(), ports[0]) if ports else False
        bolt, http = ports if ports else (None, None)
        return {
            "running": running,
            "bolt_uri": f"bolt://127.0.0.1:{bolt}" if running else "",
            "http_url": f"http://127.0.0.1:{http}" if running else "",
            "browser_url": f"http://127.0.0.1:{http}/browser/" if running else "",
            "version": (info or {}).get("neo4j_version", self.settings.neo4j_version),
            "edition": (info or {}).get("neo4j_edition", "community"),
            "data_dir": str(self.data_dir),
        }
