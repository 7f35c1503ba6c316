"""The one error type users see: a problem plus the fix, printed as a single line."""

from __future__ import annotations


class ForensicsError(Exception):
    """A problem the user can fix (bad path, bad option, missing Java, unreachable master).

    The CLI prints ``str(error)`` as one line on stderr and exits non-zero; ``--debug``
    shows the traceback instead.
    """

    def __init__(self, problem: str, fix: str | None = None):
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} {fix}" if fix else problem)
