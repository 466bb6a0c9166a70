"""`symcalc forms`: placeholder, not implemented yet (registers nothing)."""


def register(sub) -> None:
    return None
