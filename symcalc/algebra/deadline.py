"""A limit on the CPU time of slow symbolic work (sympy's solvers, limits, simplification):
past it, one ``FIELD: RULE`` line instead of a wait without end; and :func:`undecided`, the
same line where sympy cannot decide a comparison or runs out of precision.

The limit counts CPU time of this process (``ITIMER_VIRTUAL``, signal ``SIGVTALRM``), so a
busy machine does not make a fast question fail. It is enforced where it can be: in the main
thread on a POSIX system, and not inside another limit already running (the outer one
holds); elsewhere the work runs unlimited.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from ..errors import SymcalcError

SOLVE_LIMIT = 10.0  # seconds of CPU time for one solve or one sensitivity


class _Expired(BaseException):
    """Raised by the timer; a BaseException so that no ``except Exception`` swallows it."""


def _can_limit() -> bool:
    return (hasattr(signal, "setitimer") and hasattr(signal, "SIGVTALRM")
            and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0)


@contextmanager
def cpu_limit(seconds: float, field: str, what: str):
    """Run the block; after ``seconds`` of CPU time raise ``SymcalcError(field, what took
    more than ...)``."""
    if not _can_limit():
        yield
        return

    def expire(signum, frame):
        raise _Expired()

    previous = signal.signal(signal.SIGVTALRM, expire)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    except _Expired:
        raise SymcalcError(field, f"{what} took more than {seconds:g} s of CPU time; give a "
                                  "simpler relation (fewer or lower-degree terms)") from None
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


@contextmanager
def undecided(field: str, text: str):
    """Turn sympy's "cannot decide" into one line: a comparison it cannot settle (``cannot
    determine truth value of Relational``), a number it cannot pin down to the precision
    asked (``PrecisionExhausted``), recursion too deep for its tree walks."""
    from sympy.core.evalf import PrecisionExhausted

    try:
        yield
    except PrecisionExhausted:
        raise SymcalcError(field, f"sympy cannot pin down the root of {text!r:.80} exactly "
                                  "enough to round it (its numerical refinement gave up)") from None
    except TypeError as err:
        if "truth value of Relational" not in str(err):
            raise
        raise SymcalcError(field, f"sympy cannot decide a comparison in {text!r:.80} at the "
                                  "model's sizes") from None
    except RecursionError:
        raise SymcalcError(field, f"{text!r:.80} is nested too deeply for sympy") from None
