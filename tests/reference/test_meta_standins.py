"""The meta-device stand-ins of tests/hf_reference.py (``META_STANDINS``) against transformers.

A hub-sized model whose experts loop over data-dependent routing cannot run on meta, and is too
large for the CPU fallback; its forward matmul FLOPs come from a stand-in expert forward. Here
each stand-in must give exactly the FlopCounterMode total of the real eager forward on CPU, for
every tiny config of the families that use it, at two workloads (a stand-in that drops or adds a
matmul, or routes a token through the wrong number of experts, fails).
"""
from __future__ import annotations

import pytest

import hf_reference as H

# family -> the expert class its stand-in replaces
STANDIN_FAMILIES = {"dbrx": "DbrxExperts", "jetmoe": "JetMoeTopKGating"}

# the tiny configs: a class-defaults config (JetMoE's: 4.3e9 parameters) runs eagerly on CPU in
# minutes, and the stand-in's rule does not depend on the sizes
CASES = [(cid, cfg) for cid, cfg in H.family_configs()
         if cfg["model_type"] in STANDIN_FAMILIES and not cid.split("/")[1].startswith("hub-")
         and "class-defaults" not in cid]


def test_every_standin_has_tiny_configs():
    assert set(STANDIN_FAMILIES.values()) == set(H.META_STANDINS)
    for model_type in STANDIN_FAMILIES:
        assert any(cfg["model_type"] == model_type for _, cfg in CASES), model_type


@pytest.mark.parametrize("batch,seq_len", [(1, 5), (2, 7)])
@pytest.mark.parametrize("cfg", [c for _, c in CASES], ids=[cid for cid, _ in CASES])
def test_standin_equals_eager_on_cpu(cfg, batch, seq_len):
    eager = H.count_forward_flops(cfg, batch, seq_len, device="cpu", experts_implementation="eager")
    assert eager > 0
    assert H.count_forward_flops_with_standins(cfg, batch, seq_len) == eager


def test_standin_is_removed_afterwards():
    """The patched forward is the real one again once the count is done."""
    cid, cfg = CASES[0]
    model = H._meta_model(cfg)
    cls = next(type(m) for m in model.modules() if type(m).__name__ in H.META_STANDINS)
    before = cls.forward
    H.count_forward_flops_with_standins(cfg, 1, 3)
    assert cls.forward is before
    assert cls.forward is not H.META_STANDINS[cls.__name__]
