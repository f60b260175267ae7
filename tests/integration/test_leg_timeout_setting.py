"""GRAPHRAG_LEG_TIMEOUT_S reaches the searches of a runtime's router (a request's own value wins)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from graphrag.config import Settings
from graphrag.runtime import Runtime


async def test_the_setting_is_the_routers_default_leg_timeout(runtime: Runtime, models: Any) -> None:
    settings = runtime.settings.model_copy(update={"leg_timeout_s": 42.0})
    rt = Runtime(settings=settings, postgres=runtime.postgres, neo4j=runtime.neo4j, _models=models)
    router = await rt.router()
    assert router.build_config("hybrid").leg_timeout_s == 42.0
    assert router.build_config("auto", leg_timeout_s=7.5).leg_timeout_s == 7.5
    default = Runtime(settings=runtime.settings, postgres=runtime.postgres, neo4j=runtime.neo4j, _models=models)
    assert (await default.router()).build_config("vector").leg_timeout_s == runtime.settings.leg_timeout_s


def test_the_setting_is_bounded_as_a_request_is() -> None:
    with pytest.raises(ValidationError):
        Settings(leg_timeout_s=0)
    with pytest.raises(ValidationError):
        Settings(leg_timeout_s=600)
