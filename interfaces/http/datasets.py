"""Knowledge bases over HTTP: create a dataset, upload documents to it, describe it."""

from typing import Annotated, Any

from dependency_injector.wiring import Provide, inject
from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.types import Message

from application.errors import PayloadTooLarge, UnsupportedMediaType
from application.knowledge.add_document import AddDocument
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.describe_dataset import DescribeDataset
from application.knowledge.documents import AddedDocument, DatasetSummary
from domain.ids import OwnerId
from interfaces.http.owner import current_owner
from interfaces.http.schemas import UnicodeText

router = APIRouter()

# Room for multipart boundaries and part headers, or JSON's escapes (\uXXXX is 6 bytes for 1-3).
MULTIPART_OVERHEAD = 64 * 1024
JSON_ESCAPE_FACTOR = 6


class DatasetBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: UnicodeText = Field(min_length=1, max_length=200, description="What the dataset holds.")


class DocumentBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: UnicodeText = Field(min_length=1, max_length=255, description="The document's name, e.g. handbook.md.")
    text: UnicodeText = Field(description="The document's text (plain text or Markdown).")
    media_type: UnicodeText | None = Field(None, description="text/plain or text/markdown; else from the name.")


def _capped(request: Request, limit: int, document_limit: int) -> Request:
    """The same request, whose body stops being read once it passes `limit` bytes: `PayloadTooLarge`
    (naming `document_limit`, the limit the client knows) without reading the rest."""
    received = 0

    async def receive() -> Message:
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise PayloadTooLarge(f"The document is larger than the limit of {document_limit} bytes.")
        return message

    return Request(request.scope, receive)


def _dataset_data(summary: DatasetSummary) -> dict[str, Any]:
    dataset = summary.dataset
    return {
        "id": dataset.id,
        "name": dataset.name,
        "created_at": dataset.created_at.isoformat(),
        "documents": summary.documents,
        "chunks": summary.chunks,
    }


def _document_data(document: AddedDocument) -> dict[str, Any]:
    return {
        "id": document.id,
        "dataset_id": document.dataset_id,
        "name": document.name,
        "media_type": document.media_type,
        "size": document.size,
        "chunks": document.chunks,
    }


@router.post("/api/datasets", status_code=201)
@inject
async def create_dataset(
    body: DatasetBody,
    owner: Annotated[OwnerId, Depends(current_owner)],
    create: Annotated[CreateDataset, Depends(Provide["create_dataset"])],
) -> dict[str, Any]:
    """A new, empty dataset of the caller's."""
    return _dataset_data(DatasetSummary(await create(owner, body.name), 0, 0))


@router.get("/api/datasets/{dataset_id}")
@inject
async def get_dataset(
    dataset_id: UnicodeText,
    owner: Annotated[OwnerId, Depends(current_owner)],
    describe: Annotated[DescribeDataset, Depends(Provide["describe_dataset"])],
) -> dict[str, Any]:
    """The dataset's name and how many documents and chunks it holds."""
    return _dataset_data(await describe(owner, dataset_id))


@router.post(
    "/api/datasets/{dataset_id}/documents",
    status_code=201,
    response_model=None,
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "name": {"type": "string"},
                        },
                        "required": ["file"],
                    }
                },
                "application/json": {"schema": DocumentBody.model_json_schema()},
            }
        }
    },
)
@inject
async def add_document(
    dataset_id: UnicodeText,
    request: Request,
    owner: Annotated[OwnerId, Depends(current_owner)],
    add: Annotated[AddDocument, Depends(Provide["add_document"])],
) -> dict[str, Any]:
    """Upload a .txt or .md document (multipart field `file`, or JSON `{"name", "text"}`): it is cut
    into overlapping chunks, embedded and stored. Too large: 413; not text/plain or text/markdown:
    415; empty: 422."""
    limit = add.limits.max_bytes
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        form = await _capped(request, limit + MULTIPART_OVERHEAD, limit).form(max_files=1, max_fields=4)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise RequestValidationError(
                [{"type": "missing", "loc": ("body", "file"), "msg": "a multipart field `file` is required"}]
            )
        name = form.get("name")
        document = await add(
            owner, dataset_id, name if isinstance(name, str) and name else upload.filename or "document.txt",
            await upload.read(), upload.content_type,
        )
    elif kind in ("application/json", ""):
        raw = await _capped(request, limit * JSON_ESCAPE_FACTOR + MULTIPART_OVERHEAD, limit).body()
        try:
            body = DocumentBody.model_validate_json(raw)
        except ValidationError as invalid:
            raise RequestValidationError(invalid.errors()) from None
        document = await add(owner, dataset_id, body.name, body.text, body.media_type)
    else:
        raise UnsupportedMediaType(
            f"Send multipart/form-data (field `file`) or application/json, not {kind[:100]!r}."
        )
    return _document_data(document)
