"""Ports: the narrow interfaces use cases need, implemented in infrastructure."""
