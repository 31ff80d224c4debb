"""Each game's own part of its HTML report and of ``referee replay --rounds``: a
module named after the game (``GAMES`` key) with a ``REPORT`` object, a
``step_report.StepReport``. A game without a module here gets the generic report."""
