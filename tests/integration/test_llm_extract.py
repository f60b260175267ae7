"""The optional LLM extractor, driven by pydantic-ai's FunctionModel (no real model is ever called)."""

from __future__ import annotations

import copy
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from graphrag.ingest.llm_extract import CombinedExtractor, LLMExtractor
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime



def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers every chunk with the same structured extraction, through the output tool."""
    args = {
        "entities": [{"name": "Quibble Engine", "label": "product"}, {"name": "Zorblax Labs", "label": "ORG"}],
        "relations": [{"source": "Zorblax Labs", "predicate": "Build", "target": "Quibble Engine"}],
    }
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def test_structured_output_becomes_an_extraction() -> None:
    [extraction] = LLMExtractor(FunctionModel(scripted)).extract_many([["Zorblax Labs built the Quibble Engine."]])
    # Keyed by normalised name like spaCy's entities; the label is a property.
    assert {k: e.label for k, e in extraction.entities.items()} == {"quibble engine": "PRODUCT", "zorblax labs": "ORG"}
    [relation] = extraction.relations.values()
    assert relation.predicates == {("build", 0)} and relation.chunk_weights == {0: 1}
    assert extraction.mentions[(0, "zorblax labs")] == 1


async def test_llm_beside_spacy_writes_both_to_neo4j(tmp_path: Path, runtime: Runtime, models: object,
                                                     collection: str) -> None:
    llm_models = copy.copy(models)
    llm_models.extractor = CombinedExtractor(models.spacy, LLMExtractor(FunctionModel(scripted)), "merge")  # type: ignore[attr-defined]
    ingestor = Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, llm_models)  # type: ignore[arg-type]
    (tmp_path / "z.md").write_text("# Z\n\nZorblax Labs built the Quibble Engine in Toronto.")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.key AS key, e.label AS label", c=collection)
    keys = {r["key"]: r["label"] for r in rows}
    assert keys["quibble engine"] == "PRODUCT" and keys["zorblax labs"] == "ORG"  # from the LLM
    assert keys["toronto"] == "GPE"  # from spaCy
    rels, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (a:Entity {collection: $c})-[r:RELATED_TO]-(b:Entity {key: 'quibble engine'}) "
        "WHERE a.key = 'zorblax labs' RETURN r.predicates AS p", c=collection)
    assert "build" in rels[0]["p"]
