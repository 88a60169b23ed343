"""Knowledge bases over HTTP: create a dataset, list and describe them, upload documents to one."""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.types import Message

from application.errors import PayloadTooLarge, UnsupportedMediaType
from application.knowledge.add_document import AddDocument
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.describe_dataset import DescribeDataset
from application.knowledge.documents import (
    MAX_NAME,
    MEDIA_TYPES,
    NAME_PATTERN,
    UNKNOWN_TYPES,
    WHITE_SPACE,
    DatasetSummary,
    any_case,
)
from application.knowledge.list_datasets import MAX_OFFSET, MAX_PAGE, ListDatasets
from application.knowledge.read_document import ReadDocument
from domain.ids import OwnerId
from domain.knowledge.datasets import Document, DocumentStatus
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided
from interfaces.http.schemas import SOME_TEXT, JsonPattern, Name, SomeText, UnicodeText, unicode_text

router = APIRouter(responses=ERROR_RESPONSES)

# Room for multipart boundaries and part headers, or JSON's escapes (\uXXXX is 6 bytes for 1-3).
MULTIPART_OVERHEAD = 64 * 1024
JSON_ESCAPE_FACTOR = 6


def upload_bound(max_document_bytes: int) -> int:
    """The most bytes an upload's body may have: a JSON document whose every byte is escaped."""
    return max_document_bytes * JSON_ESCAPE_FACTOR + MULTIPART_OVERHEAD


# The fields of a multipart upload, as its schema in `add_document` lists them.
MULTIPART_FIELDS = ("file", "name")
# What `document_type` takes as a declared type: a text one, or one that says nothing, with parameters.
_DECLARED = "|".join(any_case(kind) for kind in (*MEDIA_TYPES, *(t for t in UNKNOWN_TYPES if t)))
MEDIA_TYPE_PATTERN = rf"^[{WHITE_SPACE}]*(?:{_DECLARED})?[{WHITE_SPACE}]*(?:;[^\x00]*)?$"
DocumentName = Annotated[str, AfterValidator(unicode_text), JsonPattern(NAME_PATTERN)]
MediaType = Annotated[str, AfterValidator(unicode_text), JsonPattern(MEDIA_TYPE_PATTERN)]


class DatasetBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name = Field(min_length=1, max_length=200, description="What the dataset holds.")


class DocumentBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: DocumentName = Field(
        min_length=1, max_length=MAX_NAME, description="The document's name, e.g. handbook.md (.txt, .md or none)."
    )
    text: SomeText = Field(description="The document's text (plain text or Markdown), UTF-8, not empty.")
    media_type: MediaType | None = Field(None, description="text/plain or text/markdown; else from the name.")


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


def _document_data(document: Document) -> dict[str, Any]:
    return {
        "id": document.id,
        "dataset_id": document.dataset_id,
        "name": document.name,
        "media_type": document.media_type,
        "size": document.size,
        "chunks": document.chunks,
        "status": document.status.value,
        "error": document.error,
    }


def _added(document: Document, response: Response) -> dict[str, Any]:
    """201 for a document indexed in the request; 202 for one an ingestion job will index."""
    if document.status is DocumentStatus.INDEXING:
        response.status_code = 202
    return _document_data(document)


@router.post("/api/datasets", status_code=201)
@inject
async def create_dataset(
    body: DatasetBody,
    owner: Annotated[OwnerId, Depends(current_owner)],
    create: Annotated[CreateDataset, Depends(Provided["create_dataset"])],
) -> dict[str, Any]:
    """A new, empty dataset of the caller's."""
    return _dataset_data(DatasetSummary(await create(owner, body.name), 0, 0))


@router.get("/api/datasets")
@inject
async def list_datasets(
    owner: Annotated[OwnerId, Depends(current_owner)],
    listing: Annotated[ListDatasets, Depends(Provided["list_datasets"])],
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
) -> dict[str, Any]:
    """A page of the caller's datasets, newest first, with how many documents and chunks each holds."""
    page = await listing(owner, offset, limit)
    return {
        "data": [_dataset_data(summary) for summary in page.summaries],
        "offset": offset,
        "limit": limit,
        "has_more": page.has_more,
    }


@router.get("/api/datasets/{dataset_id}")
@inject
async def get_dataset(
    dataset_id: UnicodeText,
    owner: Annotated[OwnerId, Depends(current_owner)],
    describe: Annotated[DescribeDataset, Depends(Provided["describe_dataset"])],
) -> dict[str, Any]:
    """The dataset's name and how many documents and chunks it holds."""
    return _dataset_data(await describe(owner, dataset_id))


@router.post(
    "/api/datasets/{dataset_id}/documents",
    status_code=201,
    response_model=None,
    responses={202: {"description": "Accepted: an ingestion job indexes it (MEMAGENT_JOBS__BACKEND=redis)"}},
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            # UTF-8 text (a binary file is refused, 415): described as the text it must be.
                            "file": {"type": "string", "minLength": 1, "pattern": SOME_TEXT},
                            "name": {"type": "string", "maxLength": MAX_NAME, "pattern": f"^$|{NAME_PATTERN}"},
                        },
                        "required": ["file"],
                        "additionalProperties": False,
                    }
                },
                "application/json": {"schema": DocumentBody.model_json_schema()},
            },
            "required": True,
        }
    },
)
@inject
async def add_document(
    dataset_id: UnicodeText,
    request: Request,
    response: Response,
    owner: Annotated[OwnerId, Depends(current_owner)],
    add: Annotated[AddDocument, Depends(Provided["add_document"])],
) -> dict[str, Any]:
    """Upload a .txt or .md document (multipart field `file`, or JSON `{"name", "text"}`): it is cut
    into overlapping chunks, embedded and stored (201, `status: ready`), or with job workers kept
    for an ingestion job (202, `status: indexing`; `GET .../documents/{id}` says when it is ready).
    Too large: 413; not text/plain or text/markdown: 415; empty: 422."""
    limit = add.limits.max_bytes
    sent = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if sent == "multipart/form-data":
        name, content, kind = await _multipart_document(request, limit)
        return _added(await add(owner, dataset_id, name, content, kind), response)
    if sent in ("application/json", ""):
        raw = await _capped(request, upload_bound(limit), limit).body()
        try:
            body = DocumentBody.model_validate_json(raw)
        except ValidationError as invalid:
            raise RequestValidationError(invalid.errors()) from None
        return _added(await add(owner, dataset_id, body.name, body.text, body.media_type), response)
    raise UnsupportedMediaType(f"Send multipart/form-data (field `file`) or application/json, not {sent[:100]!r}.")


@router.get("/api/datasets/{dataset_id}/documents/{document_id}")
@inject
async def get_document(
    dataset_id: UnicodeText,
    document_id: UnicodeText,
    owner: Annotated[OwnerId, Depends(current_owner)],
    read: Annotated[ReadDocument, Depends(Provided["read_document"])],
) -> dict[str, Any]:
    """A document of the caller's dataset: its name, type, size, chunks, and `status` (`indexing`,
    `ready`, or `failed` with its `error`)."""
    return _document_data(await read(owner, dataset_id, document_id))


async def _multipart_document(request: Request, limit: int) -> tuple[str, bytes | str, str | None]:
    """The name, content and declared type of a multipart upload: field `file` (a file part, or a
    plain field holding the text), and `name` if given, else the file part's name."""
    form = await _capped(request, limit + MULTIPART_OVERHEAD, limit).form(max_files=1, max_fields=4)
    # As a JSON body's unknown member is refused (and the schema says `additionalProperties: false`):
    # a misspelt field (`fiel`, `filename`) would otherwise be dropped without a word.
    unknown = next((field for field in form if field not in MULTIPART_FIELDS), None)
    if unknown is not None:
        raise RequestValidationError(
            [{"type": "extra_forbidden", "loc": ("body", unknown or "''"),
              "msg": "an unknown field (a multipart upload has only `file` and `name`)"}]
        )
    upload, name = form.get("file"), form.get("name")
    named = name if isinstance(name, str) and name else None
    if isinstance(upload, UploadFile):
        return named or upload.filename or "document.txt", await upload.read(), upload.content_type
    if isinstance(upload, str):
        return named or "document.txt", upload, None
    raise RequestValidationError(
        [{"type": "missing", "loc": ("body", "file"), "msg": "a multipart field `file` is required"}]
    )
