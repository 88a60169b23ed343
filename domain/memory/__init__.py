"""Memory: the window (short term), the rolling summary, the archive (long term), entities, user
facts and their slots, and recall across them."""
