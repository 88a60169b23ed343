"""Errors raised by domain rules. Each says in plain words what is wrong."""


class DomainError(ValueError):
    """A domain rule was broken by the data given."""


class MalformedHistory(DomainError):
    """A conversation history does not alternate user/assistant as it must."""
