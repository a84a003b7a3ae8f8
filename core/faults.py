"""Fault points: the named steps of a write (a batch acceptance, a daily close, a reconciliation, the sweep)
where the crash tests make the service fail, to prove that a retry converges whatever step a crash stops at.

The app only names the steps: `faults.point("records.saved")`. Nothing is installed in production, and a
point is then one test of a module global. The local host and the tests install a hook
(devhost/fault_injection.py: its catalogue POINTS says what is done, and what is not yet, at each step),
which raises or kills the process at the points they arm. The Functions app never installs one.
"""

from __future__ import annotations

from collections.abc import Callable

FaultHook = Callable[[str], None]

_hook: FaultHook | None = None


def point(name: str) -> None:
    """The step `name` of a write is done."""
    if _hook is not None:
        _hook(name)


def install(hook: FaultHook | None) -> None:
    """The hook called at every point from now on (None: none, as in production)."""
    global _hook
    _hook = hook
