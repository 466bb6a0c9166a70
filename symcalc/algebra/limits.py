"""How big a number symcalc takes, and how a number typed on the command line or in a CSV
cell reads (no sympy: every stage uses it)."""
from __future__ import annotations

import re
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any

from ..errors import SymcalcError

# Every size, count and workload number is at most this: far above any real model (10^15
# tokens, widths or layers), low enough that every quantity (a product of a few sizes) stays
# far below float's 1.8e308 and json's 4,300-digit limit when rendered.
NAME_LIMIT = 200  # characters of a name or a title (symcalc.render.escape.check_text)
SIZE_LIMIT = 10**15
SIZE_LIMIT_TEXT = "10**15"
# An integer as typed: digits, or groups of three digits after the first 1-3 separated by
# one kind of thousands separator (3200, 3_200, 3,200; not 3,2 or 32_00).
_INT_TEXT = r"[0-9]+|[0-9]{1,3}(?:_[0-9]{3})+|[0-9]{1,3}(?:,[0-9]{3})+"


def check_limit(field: str, value: int) -> None:
    """Refuse a number over SIZE_LIMIT (shown by its digit count when huge)."""
    if value > SIZE_LIMIT:
        shown = f"{value:,}" if value < 10**30 else \
            f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
        raise SymcalcError(field, f"must be at most {SIZE_LIMIT_TEXT} (got {shown})")


def parse_int(field: str, text: Any, zero: bool = False) -> int:
    """A number as typed on the command line or in a CSV cell: ASCII digits, optionally
    grouped by threes with ``_`` or ``,`` (``3200``, ``3_200``, ``3,200``; never ``3,2``),
    positive (or zero when ``zero``), at most SIZE_LIMIT."""
    raw = str(text).strip()
    what = "a whole number, zero or more" if zero else "a positive integer"
    plain = raw.isascii() and raw.isdigit()  # the common case needs no regular expression
    if not plain and not re.fullmatch(_INT_TEXT, raw):
        raise SymcalcError(field, f"must be {what}, digits optionally grouped by threes "
                                  f"with _ or , (got {raw!r:.60})")
    digits = raw.replace("_", "").replace(",", "").lstrip("0") or "0"
    if len(digits) > len(str(SIZE_LIMIT)):  # before int(): Python refuses over 4,300 digits
        raise SymcalcError(field, f"must be at most {SIZE_LIMIT_TEXT} (got a number of "
                                  f"{len(digits):,} digits)")
    value = int(digits)
    if value == 0 and not zero:
        raise SymcalcError(field, f"must be a positive integer (got {raw!r})")
    check_limit(field, value)
    return value
