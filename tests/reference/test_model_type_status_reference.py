"""symcalc/inputs/model_types.toml against transformers itself: its tables are the causal-LM,
masked-LM and sequence-to-sequence mappings (model type -> class), and every causal-LM family
file reads the class its mapping builds."""
from __future__ import annotations

import pytest
from transformers.models.auto import modeling_auto as auto

import transformers
from symcalc.inputs.family_data import load_families
from symcalc.inputs.refusals import model_types

TYPES = model_types()
MAPPINGS = {"causal_lm": auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
            "masked_lm": auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES,
            "seq2seq_lm": auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES}


def test_the_version_is_installed():
    assert TYPES["transformers"] == transformers.__version__


@pytest.mark.parametrize("key", sorted(MAPPINGS))
def test_lists_are_transformers_mappings(key):
    assert TYPES[key] == dict(MAPPINGS[key])


@pytest.mark.parametrize("key", sorted(MAPPINGS))
def test_a_family_file_reads_the_class_its_mapping_builds(key):
    families = load_families()
    read = {t for t in TYPES[key] if t in families and MAPPINGS[key][t] in families[t].classes}
    if key == "causal_lm":  # every causal-LM family reads the class the mapping builds
        assert read == {t for t in TYPES[key] if t in families}
