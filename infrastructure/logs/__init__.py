"""Log lines: the text and JSON formatters, with the turn's ids and the secrets redacted."""
