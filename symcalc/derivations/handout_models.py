"""What a handout says about each model before it derives anything: the kind of component each
breakdown path is (the categories of its table and chart), its attention in words, and the
sizes its derivations use (the models table). Data only, no formatting.
"""
from __future__ import annotations

from ..algebra.spec import Spec
from ..algebra.symbols import SIZES
from .derivation import Define, Derivation

# the kinds of component, in the order the table and chart show them; each is named as the
# derivation names its group (a mixer's own norms stay with the mixer, as the derivation keeps
# them; "norms" are the norms in front of or after each block and after the last layer)
LINEAR_ATTENTION = {"gated_deltanet": "linear attention (Gated DeltaNet)",
                    "kda": "linear attention (Kimi Delta Attention)"}
CATEGORIES = ("embeddings", "attention", *LINEAR_ATTENTION.values(), "Mamba mixers",
              "short convolutions", "FFN", "router", "experts", "shared experts", "AltUp",
              "LAuReL", "per-layer inputs", "norms", "output head", "BERT pooler",
              "masked-LM head transform", "other")
# the first part of a path inside its stack -> its kind
GROUP_CATEGORIES = {
    "embedding": "embeddings", "embedding_norm": "norms", "final_norm": "norms", "norm": "norms",
    "attention": "attention", "cross_attention": "attention", "relative_bias": "attention",
    "ssm": "Mamba mixers", "short_conv": "short convolutions", "ffn": "FFN",
    "altup": "AltUp", "laurel": "LAuReL", "per_layer_input": "per-layer inputs",
    "head": "output head", "pooler": "BERT pooler", "mlm_head": "masked-LM head transform",
    "contact_head": "output head", "entity_head": "output head",
}
# the parts of an MoE FFN -> its kind
MOE_CATEGORIES = {"router": "router", "router_bias": "router", "experts": "experts",
                  "shared": "shared experts", "shared_gate": "shared experts"}
STACKS = ("encoder", "decoder", "layer")


def category(path: str, spec: Spec | None = None) -> str:
    """The kind of component a breakdown path belongs to (``layer/moe/experts/up`` ->
    experts, ``layer/linear_attention/norm`` -> linear attention (Gated DeltaNet))."""
    bits = path.split("/")
    while len(bits) > 1 and bits[0] in STACKS:
        bits = bits[1:]
    group = bits[0]
    if group == "moe":
        return MOE_CATEGORIES.get(bits[1] if len(bits) > 1 else "", "other")
    if group == "linear_attention":
        kind = spec.linear_attn if spec is not None else ""
        return LINEAR_ATTENTION.get(kind, "linear attention (Gated DeltaNet)")
    return GROUP_CATEGORIES.get(group, "other")


def _mixers(spec: Spec) -> list[str]:
    """The mixers of a hybrid stack besides attention, in words with their layer counts."""
    out = []
    if spec.L_lin:
        name = LINEAR_ATTENTION.get(spec.linear_attn, "linear attention")
        out.append(f"{spec.L_lin} with {name}")
    if spec.L_ssm:
        out.append(f"{spec.L_ssm} with a Mamba mixer")
    if spec.L_conv:
        out.append(f"{spec.L_conv} with a short convolution")
    return out


def attention_kind(spec: Spec) -> str:
    """The model's attention in one sentence: MHA, GQA, MQA or MLA, and for a hybrid stack
    which layers have it and what the others mix with."""
    n_kv = spec.n_kv if spec.n_kv is not None else spec.n_h
    if spec.mla:
        text = (f"MLA: {spec.n_h} heads whose keys and values are up-projected from one "
                f"{spec.r_kv}-wide latent per token, with a {spec.d_rope}-wide rotary key "
                "shared by all heads; only the latent and the rotary key are cached")
    elif n_kv == spec.n_h:
        text = f"MHA: {spec.n_h} heads, each with its own K and V"
    elif n_kv == 1:
        text = f"MQA: {spec.n_h} query heads share one K/V head"
    else:
        text = (f"GQA: {spec.n_h} query heads share {n_kv} K/V heads "
                f"({spec.n_h // n_kv} each)")
    mixers = _mixers(spec)
    if spec.L_attn and mixers and spec.L_attn != spec.L:
        text += f", in {spec.L_attn} of the {spec.L} layers; the others mix without " \
                f"attention: {'; '.join(mixers)}"
    return text


def sizes_used(derivations: list[Derivation]) -> dict[str, Define]:
    """Every size the derivations define (their "Sizes" sections), by symbol name, in the
    order of the canonical symbols (then the derivations' own symbols, such as bytes per
    cached value)."""
    found: dict[str, Define] = {}
    for d in derivations:
        for step in d.steps():
            if isinstance(step, Define):
                found.setdefault(step.symbol.name, step)
    return {name: found[name] for name in in_size_order(found)}


def in_size_order(names) -> list[str]:
    """Symbol names in the order of the canonical sizes (a derivation's own symbols last)."""
    order = {name: i for i, name in enumerate(SIZES)}
    return sorted(set(names), key=lambda n: (order.get(n, len(order)), n))
