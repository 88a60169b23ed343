"""Embedders: text → vectors, behind the application's Embedder port."""
