"""The dependency-free embedder: deterministic, normalised, and ranks shared words first."""

from __future__ import annotations

import math

from domain.knowledge.datasets import cosine
from infrastructure.embeddings.lexical import LexicalEmbedder


async def test_vectors_are_deterministic_normalised_and_of_the_configured_length() -> None:
    embedder = LexicalEmbedder(dim=64)
    first, again = await embedder.embed(["Holiday allowance", "Holiday allowance"])
    assert first == again
    assert len(first) == 64
    assert math.isclose(math.sqrt(sum(x * x for x in first)), 1.0)
    assert embedder.name == "lexical-64"
    # A fresh instance (another process) gives the very same vector: no salted hash.
    assert (await LexicalEmbedder(dim=64).embed(["Holiday allowance"]))[0] == first


async def test_texts_sharing_words_or_word_forms_are_closer_than_others() -> None:
    embedder = LexicalEmbedder()
    query, holidays, parking, holiday_forms = await embedder.embed([
        "how many holiday days do I get?",
        "Holiday: 25 days per year for every employee.",
        "Parking is behind the building.",
        "holidays",
    ])
    assert cosine(query, holidays) > 0.3 > cosine(query, parking)
    assert cosine(query, holiday_forms) > 0.1  # trigrams: "holiday" meets "holidays"


async def test_stop_words_alone_embed_as_nothing() -> None:
    [vector] = await LexicalEmbedder().embed(["the and of to"])
    assert not any(vector)
