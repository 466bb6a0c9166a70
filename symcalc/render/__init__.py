"""Renderers: the only code that formats numbers, calls ``sympy.latex`` or loads jinja2."""
