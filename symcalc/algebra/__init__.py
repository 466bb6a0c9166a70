"""Model math: canonical symbols, the spec, options, and the sympy expressions of every
component, quantity and closed form. :mod:`.spec`, :mod:`.options` and :mod:`.breakdown`
import no sympy (the quick path uses them); importing this package imports none of its
modules. Never imports :mod:`symcalc.render`."""
