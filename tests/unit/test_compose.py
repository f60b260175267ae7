"""docker-compose.yml is for users with Docker (none runs here), so it is checked by reading it: that the
services it wires together agree with each other and with the settings the API reads."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from graphrag.config import Settings

REPO = Path(__file__).resolve().parents[2]
#: What a user's .env would hold for the variables compose requires.
USER_ENV = {"NEO4J_PASSWORD": "neo-secret", "POSTGRES_PASSWORD": "pg-secret"}


def _interpolate(value: object) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?message}`` with USER_ENV as the environment."""
    def one(match: re.Match[str]) -> str:
        name, op, rest = match.group(1), match.group(2) or "", match.group(3) or ""
        if name in USER_ENV:
            return USER_ENV[name]
        assert op != ":?", f"{name} is required but not in the user's environment"
        return rest if op == ":-" else ""
    return re.sub(r"\$\{(\w+)(:-|:\?)?([^}]*)\}", one, str(value))


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]


@pytest.fixture(scope="module")
def api_settings(services: dict[str, Any]) -> Settings:
    """The Settings the API container builds from its environment (and only from it)."""
    env = {k: _interpolate(v) for k, v in services["api"]["environment"].items() if k.startswith("GRAPHRAG_")}
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("GRAPHRAG_")]:
            mp.delenv(key)
        for key, value in env.items():
            mp.setenv(key, value)
        return Settings(_env_file=None)  # type: ignore[call-arg]


def _published(service: dict[str, Any]) -> dict[int, tuple[str, int]]:
    """Container port -> (host address, host port) of a service's ``ports``."""
    out = {}
    for spec in service["ports"]:
        host_ip, host_port, container_port = spec.split(":")
        out[int(container_port)] = (host_ip, int(host_port))
    return out


def test_every_graphrag_variable_is_a_setting_and_parses(services: dict[str, Any], api_settings: Settings) -> None:
    names = {key for key in services["api"]["environment"] if key.startswith("GRAPHRAG_")}
    known = {f"GRAPHRAG_{field.upper()}" for field in Settings.model_fields}
    assert names <= known, names - known
    # External servers: the container must not try to start embedded ones.
    assert not api_settings.uses_local_postgres and not api_settings.uses_local_neo4j


def test_the_api_reaches_postgres_as_compose_defines_it(services: dict[str, Any], api_settings: Settings) -> None:
    pg = services["postgres"]
    assert api_settings.postgres_dsn is not None
    dsn = urlsplit(api_settings.postgres_dsn.get_secret_value())
    assert dsn.hostname == "postgres" and dsn.port in _published(pg)
    assert dsn.username == pg["environment"]["POSTGRES_USER"]
    assert dsn.password == _interpolate(pg["environment"]["POSTGRES_PASSWORD"])
    assert dsn.path.lstrip("/") == pg["environment"]["POSTGRES_DB"]
    # The healthcheck the API waits for asks about that same database and user.
    probe = " ".join(pg["healthcheck"]["test"])
    assert f"-U {dsn.username}" in probe and f"-d {dsn.path.lstrip('/')}" in probe


def test_the_api_reaches_neo4j_as_compose_defines_it(services: dict[str, Any], api_settings: Settings) -> None:
    neo = services["neo4j"]
    uri = urlsplit(api_settings.neo4j_uri or "")
    assert uri.scheme == "bolt" and uri.hostname == "neo4j" and uri.port in _published(neo)
    user, _, password = _interpolate(neo["environment"]["NEO4J_AUTH"]).partition("/")
    assert api_settings.neo4j_user == user
    assert api_settings.neo4j_password is not None and api_settings.neo4j_password.get_secret_value() == password
    # The healthcheck probes the HTTP port that is published for the Browser.
    probed = re.search(r"localhost:(\d+)", " ".join(neo["healthcheck"]["test"]))
    assert probed is not None and int(probed.group(1)) in _published(neo)


def test_the_api_listens_where_it_is_published_and_checked(services: dict[str, Any], api_settings: Settings) -> None:
    api = services["api"]
    # Inside the container it must listen on all interfaces, on the port that is published ...
    assert api_settings.api_host == "0.0.0.0" and api_settings.api_port in _published(api)
    # ... and its healthcheck asks the open liveness route on that port.
    url = re.search(r"https?://[^'\" ]+", " ".join(api["healthcheck"]["test"]))
    assert url is not None
    checked = urlsplit(url.group(0))
    assert checked.port == api_settings.api_port and checked.path == "/health"
    from graphrag.api.middleware import OPEN_PATHS

    assert checked.path in OPEN_PATHS  # answers without an API key
    # It starts after both stores are healthy, and keeps its state on a volume.
    assert {name: dep["condition"] for name, dep in api["depends_on"].items()} == {
        "neo4j": "service_healthy", "postgres": "service_healthy"}
    assert str(api_settings.home) in {v.split(":", 1)[1] for v in api["volumes"]}


def test_ports_are_published_on_loopback_only_and_data_is_on_volumes(services: dict[str, Any]) -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    for name, service in services.items():
        assert {ip for ip, _ in _published(service).values()} == {"127.0.0.1"}, name
        assert service["healthcheck"]["test"], name
    for name, data_dir in (("neo4j", "/data"), ("postgres", "/var/lib/postgresql")):
        mounts = dict(v.split(":", 1) for v in services[name]["volumes"])
        assert data_dir in mounts.values() and set(mounts) <= set(compose["volumes"]), name
    assert services["api"]["build"] == "." and (REPO / "Dockerfile").exists()


def test_the_gpu_override_gives_the_api_a_gpu_and_a_device_setting_that_parses(services: dict[str, Any]) -> None:
    override = yaml.safe_load((REPO / "docker-compose.gpu.yml").read_text())["services"]
    assert set(override) == {"api"}  # only the API holds a model; the stores run as before
    env = override["api"]["environment"]
    assert set(env) == {"GRAPHRAG_EMBEDDING_DEVICE"} and "GRAPHRAG_EMBEDDING_DEVICE" in services["api"]["environment"]
    [device] = override["api"]["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and "gpu" in device["capabilities"] and device["count"] >= 1
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("GRAPHRAG_")]:
            mp.delenv(key)
        for file_env in (services["api"]["environment"], env):
            mp.setenv("GRAPHRAG_EMBEDDING_DEVICE", _interpolate(file_env["GRAPHRAG_EMBEDDING_DEVICE"]))
            assert Settings(_env_file=None).embedding_device in ("auto", "cuda")  # type: ignore[call-arg]
    assert _interpolate(env["GRAPHRAG_EMBEDDING_DEVICE"]) == "cuda"
