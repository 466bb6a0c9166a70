"""Derivations as data: typed steps (:mod:`.derivation`) built from the expressions by
:mod:`.derive` and :mod:`.derive_forms`, published forms (:mod:`.published`), handout data
(:mod:`.handout_data`) and where each formula comes from (:mod:`.sources`). No formatting:
:mod:`symcalc.render` reads these."""
