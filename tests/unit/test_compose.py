"""docker-compose.yml is for users with Docker (none runs here), so it is checked by parsing it."""

from __future__ import annotations

from pathlib import Path

import yaml

from graphrag.config import Settings

REPO = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_services_images_and_ports() -> None:
    services = _compose()["services"]
    assert set(services) == {"neo4j", "postgres", "api"}
    assert services["neo4j"]["image"] == "neo4j:5.26-community"
    assert services["postgres"]["image"].startswith("pgvector/pgvector:pg18")
    ports = {name: [p.split(":", 1)[1] for p in svc["ports"]] for name, svc in services.items()}
    assert {"7474:7474", "7687:7687"} <= set(ports["neo4j"])
    assert "5432:5432" in ports["postgres"]
    assert "8000:8000" in ports["api"]
    assert services["api"]["build"] == "."
    assert (REPO / "Dockerfile").exists()


def test_healthchecks_volumes_and_auth() -> None:
    compose = _compose()
    services = compose["services"]
    for name in ("neo4j", "postgres", "api"):
        assert services[name]["healthcheck"]["test"], name
    assert "NEO4J_AUTH" in services["neo4j"]["environment"]
    declared = set(compose["volumes"])
    for name in ("neo4j", "postgres"):
        mounted = {v.split(":", 1)[0] for v in services[name]["volumes"]}
        assert mounted and mounted <= declared
    depends = services["api"]["depends_on"]
    assert depends["neo4j"]["condition"] == depends["postgres"]["condition"] == "service_healthy"


def test_every_graphrag_variable_is_a_setting() -> None:
    env = _compose()["services"]["api"]["environment"]
    names = {key for key in env if key.startswith("GRAPHRAG_")}
    assert {"GRAPHRAG_POSTGRES_DSN", "GRAPHRAG_NEO4J_URI", "GRAPHRAG_NEO4J_PASSWORD"} <= names
    known = {f"GRAPHRAG_{field.upper()}" for field in Settings.model_fields}
    assert names <= known, names - known
