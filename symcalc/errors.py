"""The one exception users see: a field and the rule it broke."""
from __future__ import annotations


class SymcalcError(Exception):
    """Bad input. ``str(err)`` is one line: ``<field>: <rule>``."""

    def __init__(self, field: str, rule: str):
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule
