"""Pure domain objects and policies of memagent: standard library only."""
