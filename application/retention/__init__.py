"""Retention: what is kept past its age is removed, a bounded batch at a time."""
