"""OpenAPI pieces Litestar cannot derive: the two request encodings of ``POST /documents``, and the
problem-details responses shared by every endpoint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, Operation, RequestBody
from litestar.openapi.spec.base import BaseSchemaObject

from graphrag.api.schemas import DocumentIn, Problem

PROBLEM_MEDIA = "application/problem+json"


@dataclass
class RawSchema(BaseSchemaObject):
    """A JSON schema written out as is (here: pydantic's own schema of a model)."""

    raw: dict[str, Any] = field(default_factory=dict)

    def to_schema(self) -> dict[str, Any]:
        return self.raw


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    """Problem-details response specs for the given status codes."""
    text = {400: "Invalid input (the detail names the problem)", 401: "Missing or wrong API key",
            404: "Unknown id or collection", 413: "Over the size limit", 415: "Unsupported media type",
            422: "Content that cannot be read", 501: "Not configured (the detail names the setting)",
            503: "A store is unavailable"}
    return {s: ResponseSpec(data_container=Problem, media_type=PROBLEM_MEDIA, description=text.get(s, "Error"),
                            generate_examples=False) for s in statuses}


UPLOAD_FORM: dict[str, Any] = {
    "type": "object",
    "required": ["file"],
    "properties": {
        "file": {"type": "string", "format": "binary",
                 "description": "The file: .md, .mdx, .rst, .adoc, .ipynb, .txt, .html, .pdf or .docx (the extension picks the reader)."},
        "collection": {"type": "string", "description": "Collection (default: GRAPHRAG_DEFAULT_COLLECTION)."},
        "source": {"type": "string",
                   "description": "Stable identifier; posting it again replaces the document. Default: the file "
                                  "name, or `<name>#<12 hex of the bytes' SHA-256>` when a document of other "
                                  "bytes already has that name."},
        "replace": {"type": "string", "enum": ["true", "false"],
                    "description": "true: replace the document stored under the file name (default false)."},
        "metadata": {"type": "string", "description": "Metadata as a JSON object."},
        "tags": {"type": "string", "description": "Comma-separated tags."},
    },
}


@dataclass
class DocumentUploadOperation(Operation):
    """``POST /documents`` takes JSON text or a multipart file upload."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            description="A document as JSON text, or a file upload.",
            content={
                "application/json": OpenAPIMediaType(schema=RawSchema(DocumentIn.model_json_schema())),  # type: ignore[arg-type]
                "multipart/form-data": OpenAPIMediaType(schema=RawSchema(UPLOAD_FORM)),  # type: ignore[arg-type]
            },
        )
