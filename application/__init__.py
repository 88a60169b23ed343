"""Use cases of memagent and the ports they need. Imports `domain` only."""
