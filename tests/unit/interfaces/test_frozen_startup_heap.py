"""The heap start-up built is kept out of the garbage collector's full passes while the app runs."""

from __future__ import annotations

import gc

from interfaces.lifecycle import frozen_startup_heap


def test_what_start_up_built_is_frozen_while_the_app_runs_and_thawed_at_shutdown() -> None:
    built_at_start_up = [object() for _ in range(10)]
    with frozen_startup_heap():
        assert gc.get_freeze_count() >= len(built_at_start_up)
    assert gc.get_freeze_count() == 0
