"""A running turn as a task: follow its events, stop it, sweep the ones whose worker died."""

from application.tasks.find_task import FindTask
from application.tasks.follow_task import FollowTask
from application.tasks.stop_task import StopTask
from application.tasks.sweep_stale_turns import SweepStaleTurns

__all__ = ["FindTask", "FollowTask", "StopTask", "SweepStaleTurns"]
