"""Wiring: the container that builds every concrete object, its sub-containers by capability, and
the recipe that builds it from the settings (`build.py`)."""
