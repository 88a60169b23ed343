"""`memagent chat`: a terminal client of a running memagent server."""
