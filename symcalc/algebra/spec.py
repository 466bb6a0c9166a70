"""An architecture, with every switch explicit. No sympy here: the quick path uses it too.

A :class:`Spec` holds the sizes (canonical symbol names: ``L``, ``d``, ``n_h`` ...) and the
structural switches of one model. :func:`make_spec` fills the derived defaults (``d_h`` from
``d / n_h``, ``n_kv`` from ``n_h``) and checks every rule, raising :class:`SymcalcError` with
the field and the rule it broke.
"""
from __future__ import annotations


import os
from ..records import Record, asdict, fields
from functools import lru_cache
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Optional

from ..errors import SymcalcError
from . import implementation as impl
from .limits import SIZE_LIMIT, SIZE_LIMIT_TEXT, check_limit, parse_int  # noqa: F401

FAMILIES = ("encoder", "decoder", "encoder-decoder")
FFN_KINDS = ("plain", "gated")
NORMS = ("layernorm", "layernorm_nobias", "rmsnorm", "none")
QK_NORMS = ("none", "head", "all_heads")
HEADS = ("none", "tied", "untied")
POSITIONS = ("learned", "rotary", "relative", "none")
PROJECTIONS = ("q", "k", "v", "o")
LINEAR_ATTNS = ("none", "gated_deltanet", "kda", "lightning", "rwkv", "mlstm")
SSMS = ("none", "mamba", "mamba2", "rglru")

SIZE_FIELDS = ("L", "d", "n_h", "n_kv", "d_h", "d_ff", "V", "P", "T", "E", "k", "R", "L_dec", "W",
               "d_moe", "E_s", "d_sh", "r_q", "r_kv", "d_nope", "d_rope", "d_v", "d_emb",
               "n_lk", "n_lv", "d_lk", "d_lv", "K_conv", "d_in", "N_s", "G_s", "H_s", "R_dt",
               "Q_c", "n_alt", "r_laurel", "d_ple", "V_ple", "d_ff_sum", "d_hg", "n_kvg", "Z_e",
               "n_ih", "d_ih", "r_g", "d_ai", "B_sh", "r_ad", "d_bk", "d_out", "V_pr", "d_pr",
               "V_sp", "d_sp", "n_ad", "d_ad", "K_cb", "d_rel", "K_g", "d_r", "n_hc", "n_hw",
               "r_qw", "r_kvw", "d_nw", "d_rw", "d_vw", "B_l", "K_rel", "P_2d", "d_ph", "V_ent",
               "d_ent", "r_hc", "C_ix", "V_ng", "d_ng", "d_pe", "K_pe", "N_g", "m_csa", "m_hca",
               "g_o", "r_o")
# layer counts that may be zero
COUNT_FIELDS = ("L_dense", "L_local", "L_attn", "L_lin", "L_ssm", "L_conv", "L_ffn",
                "L_kv_shared", "L_kv_shared_local", "L_idx", "d_cat", "L_x", "V_x", "X_rel",
                "Q_in", "X_res", "d_bb", "V_c", "V_sel", "L_ple", "L_csa", "L_hca")
HYBRID_COUNTS = ("L_attn", "L_lin", "L_ssm", "L_conv", "L_ffn")
FLAG_FIELDS = ("attention_output", "ffn_bias", "final_norm", "embedding_norm", "token_embedding",
               "head_bias", "pooler", "mlm_head", "mla", "norm_attn_in", "norm_ffn_in",
               "norm_attn_out", "norm_ffn_out", "parallel", "shared_gate", "expert_bias",
               "qk_norm_bias", "router_bias", "sinks", "attn_gate", "ssm_bias", "conv_bias",
               "ssm_norm", "ssm_inner_norms", "ssm_out_bias", "cross_attention",
               "attn_gate_unbiased", "first_attn_norm", "mlm_bias", "last_o_bias", "stack_token_tables",
               "shared_token_table", "relative_per_layer",
               "global_k_eq_v", "parallel_moe", "sinks_local", "xielu", "attn_sub_norm",
               "ffn_sub_norm", "diff_attn", "attn_gate_per_head", "attn_gate_head_bias",
               "moe_out_norm", "mla_q_gate", "attn_experts", "attn_adapters", "dyn_mask",
               "residual_scales", "lin_full_gates", "ngpt_scales", "embedding_project",
               "rotary_table", "adapter_norm", "short_convs", "router_shared",
               "residual_affine", "head_scales", "sink_proj", "dyn_convs", "initial_state",
               "k_rope_norm", "ffn_down_bias", "contact_head", "dis_c2p", "dis_p2c",
               "dis_share", "dis_norm", "final_norm_nobias", "ent_queries", "ent_head",
               "ent_untied", "dis_v1", "value_conv",
               "mla_kv_shared", "hc_mix")


class Spec(Record):
    """One architecture. Sizes that do not apply are ``None``."""

    name: str
    family: str
    L: int
    d: int
    n_h: int
    d_ff: int
    V: Optional[int] = None  # vocabulary (needed by a token table or a head)
    n_kv: Optional[int] = None
    d_h: Optional[int] = None
    P: Optional[int] = None  # learned position table rows
    T: Optional[int] = None  # token-type vocabulary
    E: Optional[int] = None  # experts per layer (MoE only)
    k: Optional[int] = None  # experts per token (MoE only)
    R: Optional[int] = None  # relative-attention buckets (T5)
    L_dec: Optional[int] = None  # decoder layers (encoder-decoder only)
    W: Optional[int] = None  # sliding attention window (caps the KV cache)
    L_local: Optional[int] = None  # layers that slide (None with W: all of them)
    d_moe: Optional[int] = None  # expert FFN width (None: d_ff)
    E_s: Optional[int] = None  # shared experts per MoE layer
    d_sh: Optional[int] = None  # width of each shared expert (None: d_moe)
    Z_e: Optional[int] = None  # zero-computation experts the router may pick (LongCat-Flash)
    L_dense: Optional[int] = None  # dense-FFN layers of an MoE stack (None: 0)
    r_q: Optional[int] = None  # MLA query rank (None: direct query projection)
    r_kv: Optional[int] = None  # MLA key/value latent rank
    d_nope: Optional[int] = None  # MLA non-rotary query/key head dim
    d_rope: Optional[int] = None  # MLA decoupled rotary head dim
    d_v: Optional[int] = None  # value head dim (MLA, or MiMo-V2-Flash's v_head_dim)
    d_emb: Optional[int] = None  # token-embedding width (OPT word_embed_proj_dim; None: d)
    # ELECTRA, RoFormer, RemBERT: the whole embedding stage (token, position and token-type
    # tables, its norm) at width d_emb and one biased linear d_emb -> d after it (no project_out)
    embedding_project: bool = False
    # the masked-LM transform's output and the head's input width where it is neither d nor
    # the token table's (RemBERT's output_embedding_size; None: the token table's width)
    d_out: Optional[int] = None
    # RoFormer: the rotary sin/cos table is an nn.Embedding of P rows of width d_h, frozen but
    # a parameter (embed_positions), so counted as transformers counts it
    rotary_table: bool = False
    # RoCBERT: pronunciation (V_pr x d_pr) and shape (V_sp x d_sp) tables beside the word table
    # (None: none), and with concat_input the d_cat channels of those it enables concatenated
    # to the token embedding and mapped into d by one biased linear (None: no map)
    V_pr: Optional[int] = None
    d_pr: Optional[int] = None
    V_sp: Optional[int] = None
    d_sp: Optional[int] = None
    d_cat: Optional[int] = None
    # X-MOD: n_ad bottleneck adapters per layer (one per language: d -> d_ad -> d, biased),
    # each token through one of them; adapter_norm: their own LayerNorm (None: no adapters)
    # Mllama: L_x cross-attention layers (of the L) that a text-only forward skips, counted in
    # the parameters only (None: none); V_x token rows beyond the head's vocabulary (None: 0)
    K_cb: Optional[int] = None  # MusicGen: codebooks, each a token table and a head (None: 1)
    L_x: Optional[int] = None
    V_x: Optional[int] = None
    # Gemma 4's assistant: the target ("backbone") model's width, its states projected in from
    # 2 d_bb and the assistant's output projected back to d_bb (None: no such projections)
    d_bb: Optional[int] = None
    # Gemma 4's assistants with use_ordered_embeddings: V_c centroids (a d x V_c layer) pick
    # which V_sel rows of the head a token's logits are computed for (None: the whole head)
    V_c: Optional[int] = None
    V_sel: Optional[int] = None
    n_ad: Optional[int] = None
    d_ad: Optional[int] = None
    adapter_norm: bool = False
    # hybrid stacks: layers by mixer (None: L_attn = L_ffn = L, the others 0)
    L_attn: Optional[int] = None  # layers with softmax attention
    L_lin: Optional[int] = None  # layers with a linear-attention mixer
    L_ssm: Optional[int] = None  # layers with a Mamba mixer
    L_conv: Optional[int] = None  # layers with LFM2's short-convolution mixer
    L_ffn: Optional[int] = None  # layers with an FFN (dense or MoE)
    n_lk: Optional[int] = None  # linear-attention query/key heads
    n_lv: Optional[int] = None  # linear-attention value heads
    d_lk: Optional[int] = None  # linear-attention query/key head dim
    d_lv: Optional[int] = None  # linear-attention value head dim
    K_conv: Optional[int] = None  # depthwise convolution width
    d_in: Optional[int] = None  # Mamba inner width
    N_s: Optional[int] = None  # SSM state size
    G_s: Optional[int] = None  # Mamba-2 groups
    H_s: Optional[int] = None  # Mamba-2 heads
    R_dt: Optional[int] = None  # Mamba-1 dt rank
    Q_c: Optional[int] = None  # chunk length of the chunked scans (None: 64)
    # Gemma 3n (None: the part is absent)
    n_alt: Optional[int] = None  # AltUp streams
    r_laurel: Optional[int] = None  # LAuReL rank
    d_ple: Optional[int] = None  # per-layer input width
    V_ple: Optional[int] = None  # per-layer input table rows
    L_kv_shared: Optional[int] = None  # last attention layers reusing earlier keys/values (0)
    L_kv_shared_local: Optional[int] = None  # sliding layers among them (0)
    d_ff_sum: Optional[int] = None  # dense-FFN widths summed over the layers (None: L_ffn d_ff)
    # the global (non-sliding) layers of a mixed stack with an attention shape of their own
    # (Gemma 4: global_head_dim, num_global_key_value_heads; None: as the sliding layers)
    d_hg: Optional[int] = None  # head width of the global layers
    n_kvg: Optional[int] = None  # key/value heads of the global layers
    global_k_eq_v: bool = False  # the global layers' values are their keys (no v projection)
    # Gemma 4's MoE block: the experts beside the dense MLP (given as a shared expert), with
    # a norm before the experts and one after each branch, and a router with input and
    # per-expert scales
    parallel_moe: bool = False
    sinks_local: bool = False  # the sinks are on the sliding layers only (MiMo-V2-Flash)
    xielu: bool = False  # the dense FFN's activation learns two scalars per layer (Apertus)
    attn_sub_norm: bool = False  # a norm of width d on the attention output before o (BitNet)
    ffn_sub_norm: bool = False  # a norm of width d_ff before the dense FFN's down (BitNet)
    diff_attn: bool = False  # differential attention: the core twice, four lambdas (DiffLlama)
    # DeepSeek Sparse Attention's lightning indexer beside MLA (None: no indexer)
    n_ih: Optional[int] = None  # indexer heads
    d_ih: Optional[int] = None  # indexer head dim
    L_idx: Optional[int] = None  # attention layers running their own indexer (None: all)
    # Zamba: the L_attn hybrid layers run shared attention+MLP blocks whose weights B_sh
    # copies hold (None: every layer its own), each use followed by a d x d projection of its
    # own; their attention projections read d_ai inputs (None: d; Zamba 2d). Dory's looped
    # layers: B_sh distinct layers run L times in all (no d_ai, no projection)
    B_sh: Optional[int] = None
    d_ai: Optional[int] = None
    # Zamba2: each use of a shared block adds a low-rank adapter of rank r_ad to its MLP's gate
    # and up projections (None: none), and with attn_adapters to its q, k and v
    r_ad: Optional[int] = None
    attn_adapters: bool = False
    d_bk: Optional[int] = None  # RG-LRU (ssm = rglru): width of each block of its gates
    # Doge: dynamic mask attention (dt_proj n_kv d_h -> n_kv over the values, A per key/value
    # head) and two d-wide learned residual scales per layer
    dyn_mask: bool = False
    residual_scales: bool = False
    # Ling's hybrids (bailing_hybrid): KDA's forget and output gates as full-rank projections
    lin_full_gates: bool = False
    # Dory (nGPT-style): per-channel scales of the queries and of the output gate (2 n_h d_h
    # per attention layer) and of the MLP's gate and up (2 d_ff per FFN)
    ngpt_scales: bool = False
    # Inkling: depthwise causal convolutions of width K_conv (no bias) on the keys and values
    # (n_kv d_h channels each) and on the attention and MLP outputs (d each) in every layer
    short_convs: bool = False
    # Inkling: relative-position logits, d -> n_h d_rel per attention layer (r_proj) mixing a
    # bank of d_rel profiles over the layer's backward distances, X_rel of them summed over the
    # attention layers (None: none)
    d_rel: Optional[int] = None
    X_rel: Optional[int] = None
    # Inkling: the router scores the E_s shared experts too (E + E_s rows) and learns a global
    # scale; each dense MLP learns a global output scale
    router_shared: bool = False
    # GTE: the gated FFN's down projection alone has a bias (ffn_bias false)
    ffn_down_bias: bool = False
    # ESM: the contact-prediction regression every EsmModel holds (L n_h + 1; parameters only)
    contact_head: bool = False
    # ESM C: the final LayerNorm has no bias where the layers' LayerNorms have one
    final_norm_nobias: bool = False
    # DeBERTa-v2's disentangled attention: a table of 2 K_rel relative-position embeddings
    # (K_rel: the span each side; None: none), normed with dis_norm, whose keys score the
    # queries (c2p) and whose queries score the keys (p2c), projected by each layer's own
    # pos_key_proj / pos_query_proj or, with dis_share, by its key_proj and query_proj
    K_rel: Optional[int] = None
    # LayoutLM: four 2D position tables (x, y, height, width of each token's box) of P_2d rows
    P_2d: Optional[int] = None
    # UltraBERT: a prediction head of two bias-free linears, d -> d_ph -> d, before the decoder
    d_ph: Optional[int] = None
    # LUKE: an entity table of V_ent rows of d_ent (projected to d when narrower) with its own
    # position and token-type tables and norm; entity-aware attention's three more queries per
    # layer (ent_queries); the entity prediction head (ent_head). Without entity inputs the
    # forward runs none of them: parameters only
    V_ent: Optional[int] = None
    d_ent: Optional[int] = None
    ent_queries: bool = False
    ent_head: bool = False
    ent_untied: bool = False  # the entity decoder holds its own V_ent x d_ent weight
    dis_c2p: bool = False
    dis_p2c: bool = False
    dis_share: bool = False
    dis_norm: bool = False
    # DeBERTa v1: the span is min(s, K_rel) distances each side, pos_proj bias-free
    dis_v1: bool = False
    # Nystromformer: a depthwise convolution of width K_conv over each head's values (one
    # kernel per head, no bias), added to the attention's context
    value_conv: bool = False
    # ZAYA: compressed convolutional attention (a depthwise convolution of width K_conv and a
    # grouped one of width K_g over the queries and keys, with biases; None: none), an MLP
    # router on a d_r-wide state (None: a linear router), and learned scales and biases on the
    # residual stream and the sublayer outputs
    # Inkling 2: per-head scales of the queries and relative states; a sink logit per head
    # projected from the layer input; the global layers' key and value convolutions with
    # per-token weights (weight_proj) and three input norms; block attention residuals with
    # Q_in learned queries reading X_res stacked states in all (None: none)
    head_scales: bool = False
    sink_proj: bool = False
    dyn_convs: bool = False
    Q_in: Optional[int] = None
    X_res: Optional[int] = None
    K_g: Optional[int] = None
    d_r: Optional[int] = None
    residual_affine: bool = False
    # HY-V4: hyper-connections over n_hc residual streams (None: one plain residual stream)
    n_hc: Optional[int] = None
    # Qwen4-Exp: gated residuals over the n_hc streams, each with an input mixer of rank r_hc
    # (None: HY-V4's hyper-connections where n_hc is given); the QSA indexer (with n_ih, d_ih:
    # one key, averaged over blocks of C_ix tokens; None: DeepSeek's indexer); hashed n-gram
    # per-layer embeddings in L_ple layers (V_ng table rows of d_ng in all, a d_pe-wide
    # embedding per token, a depthwise convolution of K_pe taps dilated by N_g; None: none)
    r_hc: Optional[int] = None
    C_ix: Optional[int] = None
    L_ple: Optional[int] = None
    V_ng: Optional[int] = None
    d_ng: Optional[int] = None
    d_pe: Optional[int] = None
    K_pe: Optional[int] = None
    N_g: Optional[int] = None
    # DeepSeek-V4 (transformers' DeepseekV4Attention, DeepseekV4HyperConnection): the
    # hyper-connections' n_hc x n_hc residual mix; MLA's latent and rotary key used as the one
    # key/value head (no kv_b); the grouped output projection (g_o groups of rank r_o); the KV
    # compressors of L_csa CSA layers (rate m_csa, with their indexer of n_ih x d_ih) and L_hca
    # HCA layers (rate m_hca)
    hc_mix: bool = False
    mla_kv_shared: bool = False
    g_o: Optional[int] = None
    r_o: Optional[int] = None
    m_csa: Optional[int] = None
    m_hca: Optional[int] = None
    L_csa: Optional[int] = None
    L_hca: Optional[int] = None
    # HRM-Text: a learned initial state of width d for its low-level stack (z_L_init)
    initial_state: bool = False
    # dots.llm3's MLA: the sliding layers' own shape (heads, query and key/value latent ranks,
    # non-rotary, rotary and value head widths; None: the other layers'), and an RMSNorm of the
    # shared rotary key (k_rope_only_layernorm, d_rope wide)
    n_hw: Optional[int] = None
    r_qw: Optional[int] = None
    r_kvw: Optional[int] = None
    d_nw: Optional[int] = None
    d_rw: Optional[int] = None
    d_vw: Optional[int] = None
    k_rope_norm: bool = False
    linear_attn: str = "none"
    ssm: str = "none"
    attn_gate: bool = False
    attn_gate_unbiased: bool = False  # the output gate has no bias where the query has (AFMoE)
    attn_gate_per_head: bool = False  # one gate per head, d -> n_h (LFM3, Laguna), not per channel
    attn_gate_head_bias: bool = False  # the gate adds one bias per head (Beam's gate_bias)
    moe_out_norm: bool = False  # a norm on the MoE block's output, MoE layers only (A.X-K1)
    # A.X-K2: MLA's q_gate_proj (the query latent and its normed copy -> queries and an output
    # gate per value channel), and norms gated by a low-rank MLP of rank r_g (None: none)
    mla_q_gate: bool = False
    # JetMoE: query and output projections as E experts of n_kv heads each, k of them per token
    # (n_h = n_kv k), with a router of their own, and an output bias on both mixtures
    attn_experts: bool = False
    r_g: Optional[int] = None
    # a cross-attention block (and its norm) in every layer of a decoder-only stack that a
    # forward pass without an encoder never runs: parameters only (BART-shaped decoders alone)
    cross_attention: bool = False
    # an encoder-decoder whose encoder and decoder each hold a token table of their own beside
    # the shared one (BART-shaped models untied: transformers 5.24 ties the three only with
    # tie_word_embeddings)
    stack_token_tables: bool = False
    # with stack_token_tables: the shared table beside the stacks' own (false: the encoder's and
    # the decoder's only, two in all: T5Gemma, FSMT, Marian unshared)
    shared_token_table: bool = True
    # every layer's self-attention holds a relative-attention bias table of its own (UMT5),
    # not only each stack's first (T5)
    relative_per_layer: bool = False
    # LongT5: an encoder-decoder's encoder attends locally, in blocks of B_l tokens, each query
    # block to its own and its two neighbours (3 B_l keys), the sequence padded to whole blocks
    # (None: full attention)
    B_l: Optional[int] = None
    first_attn_norm: bool = True  # the first layer's norm before attention (ModernBERT: none)
    mlm_bias: bool = True  # the masked-LM head's dense layer has a bias (ModernBERT: none)
    # the last layer's attention output alone has a bias (GPT-NeoX-Japanese's dense_bias)
    last_o_bias: bool = False
    ssm_bias: bool = False  # Mamba in_proj and (unless ssm_out_bias says) out_proj biases
    ssm_out_bias: Optional[bool] = None  # Falcon-H1: out_proj bias on its own (None: ssm_bias)
    conv_bias: bool = False
    ssm_norm: bool = False
    ssm_inner_norms: bool = False
    mla: bool = False
    qk_norm: str = "none"
    qk_norm_bias: bool = False
    norm_attn_in: bool = True
    norm_ffn_in: bool = True
    norm_attn_out: bool = False
    norm_ffn_out: bool = False
    parallel: bool = False
    shared_gate: bool = False
    expert_bias: bool = False
    router_bias: bool = False
    sinks: bool = False
    attention_bias: str = "none"  # any of q,k,v,o: "all", "none", "qkv", "o", "q,k"
    attention_output: bool = True
    ffn: str = "plain"
    ffn_bias: bool = False
    norm: str = "layernorm"
    final_norm: bool = True
    embedding_norm: bool = False
    token_embedding: bool = True
    position: str = "none"
    head: str = "tied"
    head_bias: bool = False
    pooler: bool = False
    mlm_head: bool = False
    # how its transformers implementation computes, which decides what it keeps for backward:
    # the fields of symcalc/algebra/implementation.toml (a hand-written spec keeps their
    # defaults, Korthikanti et al.'s assumptions: GeLU-like activation, both dropouts)
    implementation: impl.Implementation = impl.Implementation()
    source: str = ""

    # -- derived views -------------------------------------------------------------------
    @property
    def moe(self) -> bool:
        return self.E is not None

    @property
    def biased_projections(self) -> frozenset[str]:
        return parse_bias(self.attention_bias)

    @property
    def shape(self) -> str:
        """``single`` (one stack: encoder-only or decoder-only) or ``encoder-decoder``."""
        return "encoder-decoder" if self.family == "encoder-decoder" else "single"

    @property
    def projected_embedding(self) -> bool:
        return self.d_emb is not None and self.d_emb != self.d

    @property
    def dense_layers(self) -> int:
        """Layers with a dense FFN in an MoE stack (0 when every layer is MoE)."""
        return self.L_dense or 0

    @property
    def attention_layers(self) -> int:
        """Layers with softmax attention (all of them unless the stack is hybrid)."""
        return self.L if self.L_attn is None else self.L_attn

    @property
    def ffn_layers(self) -> int:
        """Layers with an FFN (all of them unless some blocks hold only a mixer)."""
        return self.L if self.L_ffn is None else self.L_ffn

    @property
    def hybrid(self) -> bool:
        """Some layers mix tokens by linear attention, an SSM or a short convolution, or
        some blocks lack attention or an FFN; or Inkling's short convolutions or ZAYA's
        convolutional attention run beside attention (their windows are state)."""
        return (any(getattr(self, f) is not None for f in HYBRID_COUNTS) or self.short_convs
                or self.K_g is not None)

    @property
    def kv_shared_layers(self) -> int:
        """Attention layers that reuse an earlier layer's keys and values (Gemma 3n)."""
        return self.L_kv_shared or 0

    @property
    def local_layers(self) -> int:
        """Layers whose KV cache the window W caps."""
        if self.W is None:
            return 0
        return self.attention_layers if self.L_local is None else self.L_local

    def sizes(self) -> dict[str, int]:
        """The sizes that apply to this model, by canonical name."""
        return {f: getattr(self, f) for f in SIZE_FIELDS + COUNT_FIELDS
                if getattr(self, f) is not None}

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["implementation"] = self.implementation.given()
        return out


FIELD_NAMES = tuple(f.name for f in fields(Spec))
FIELD_DEFAULTS = {f.name: f.default for f in fields(Spec) if f.name != "implementation"}


def parse_bias(text: str) -> frozenset[str]:
    """The projections an ``attention_bias`` text names (the language's ``projections``)."""
    from .lang import ValueProblem, _projections

    try:
        return frozenset(_projections(str(text)))
    except ValueProblem:
        raise SymcalcError("attention_bias", "must be 'all', 'none' or a list of q, k, v, o") from None


def _positive_int(field: str, value: Any) -> int:
    """A size: an int (never a float, even 2.0, nor a bool), 1 to SIZE_LIMIT."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SymcalcError(field, f"must be a positive integer (got {value!r:.60})")
    if value <= 0:
        raise SymcalcError(field, f"must be a positive integer (got {value})")
    check_limit(field, value)
    return value


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise SymcalcError(field, f"must be one of {', '.join(allowed)} (got {value!r})")
    return value


def _flag(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SymcalcError(field, f"must be true or false (got {value!r})")
    return value


def _count(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SymcalcError(field, f"must be a whole number, zero or more (got {value!r:.60})")
    check_limit(field, value)
    return value


RULES_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec.toml")
RULES_LABEL = "symcalc/algebra/spec.toml"


@lru_cache(maxsize=None)
def rules() -> dict[str, Any]:
    """spec.toml compiled (:mod:`symcalc.algebra.rules`): the steps of make_spec, the
    switches and the size values; read once per process."""
    from .. import compiled

    def build(raw: bytes) -> dict[str, Any]:
        from .rules import compile_rules

        return compile_rules(compiled.read_toml_bytes(raw, RULES_LABEL), RULES_LABEL, FIELD_NAMES)

    return compiled.load(compiled.ALGEBRA_STORE, "spec", RULES_PATH, build)


def make_spec(**values: Any) -> Spec:
    """Build a checked :class:`Spec`; derived sizes are filled in."""
    unknown = sorted(set(values) - set(FIELD_NAMES))
    if unknown:
        if unknown[0] in impl.field_names():
            raise SymcalcError(unknown[0], "is an implementation field: give it in the "
                                           "[implementation] table")
        raise SymcalcError(unknown[0], "is not a symcalc spec field")
    for required in ("name", "family", "L", "d", "n_h", "d_ff"):
        if values.get(required) is None:
            raise SymcalcError(required, "is required")
    v = dict(values)
    for f in ("name", "source"):
        if f in v and not isinstance(v[f], str):
            raise SymcalcError(f, f"must be text (got {v[f]!r})")
    for f in SIZE_FIELDS:
        if v.get(f) is not None:
            v[f] = _positive_int(f, v[f])
    for f in COUNT_FIELDS:
        if v.get(f) is not None:
            v[f] = _count(f, v[f])
    got = v.get("implementation")
    if got is not None and not isinstance(got, (dict, impl.Implementation)):
        raise SymcalcError("implementation", f"must be a table of implementation fields "
                                             f"(got {got!r:.60})")
    v["implementation"] = impl.make(got)
    _choice("family", v["family"], FAMILIES)
    _choice("ffn", v.get("ffn", "plain"), FFN_KINDS)
    _choice("norm", v.get("norm", "layernorm"), NORMS)
    _choice("head", v.get("head", "tied"), HEADS)
    _choice("position", v.get("position", "none"), POSITIONS)
    _choice("qk_norm", v.get("qk_norm", "none"), QK_NORMS)
    _choice("linear_attn", v.get("linear_attn", "none"), LINEAR_ATTNS)
    _choice("ssm", v.get("ssm", "none"), SSMS)
    for f in FLAG_FIELDS:
        if f in v and not (f == "ssm_out_bias" and v[f] is None):
            _flag(f, v[f])
    parse_bias(v.get("attention_bias", "none"))

    from .rules import run

    run(rules()["steps"], v, FIELD_DEFAULTS, RULES_LABEL)
    return Spec(**v)


def with_overrides(spec: Spec, overrides: dict[str, Any]) -> Spec:
    """``--set key=value`` on an existing spec, re-checked. Sizes that followed from others
    keep following them unless set too: d_h = d / n_h, n_kv = n_h, and d_ff = 4 d (so
    ``gpt2 --set L=24 --set d=1024 --set n_h=16`` is GPT-2 medium). A key may also be an
    implementation field (``--set act=relu``)."""
    base = asdict(spec)
    implementation = spec.implementation.given()
    for key in overrides:
        if key in impl.field_names():
            continue
        if key not in FIELD_NAMES or key == "implementation":
            raise SymcalcError(f"--set {key}", "is not a symcalc spec field "
                               f"(known: {', '.join(f for f in FIELD_NAMES if f != 'implementation')}"
                               f"; implementation: {', '.join(impl.field_names())})")
    spec_overrides = {k: x for k, x in overrides.items() if k not in impl.field_names()}
    implementation.update({k: x for k, x in overrides.items() if k in impl.field_names()})
    base.update(spec_overrides)
    base["implementation"] = implementation
    new_d = spec_overrides.get("d")
    if "d_ff" not in overrides and spec.d_ff == 4 * spec.d and type(new_d) is int and new_d > 0:
        base["d_ff"] = 4 * new_d
    if "d" in overrides or "n_h" in overrides:
        if "d_h" not in overrides and spec.d_h == spec.d // spec.n_h and spec.d % spec.n_h == 0:
            base["d_h"] = None  # keep d_h = d / n_h when it was derived
    if "n_h" in overrides and "n_kv" not in overrides and spec.n_kv == spec.n_h:
        base["n_kv"] = None
    return make_spec(**base)


def coerce_text(key: str, text: str) -> Any:
    """Turn the text of ``--set key=value`` into the field's type: sizes and counts are
    integers (:func:`parse_int`), switches true/false (also yes/no, on/off, 1/0), an
    implementation field as it takes it, and every other field -- a name, a source, a
    choice -- is the text as typed, whatever it looks like."""
    if key in SIZE_FIELDS or key in COUNT_FIELDS:
        return parse_int(f"--set {key}", text, zero=True)  # make_spec refuses 0 for a size
    if key in FLAG_FIELDS:
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise SymcalcError(f"--set {key}", f"must be true or false (got {text!r:.60})")
    if key in impl.field_names():
        return impl.coerce_text(key, text)
    return text


def switch_values(spec: Spec) -> dict[str, int]:
    """The 0/1 indicator for every structural switch symbol of :mod:`symcalc.algebra.symbols`
    (spec.toml's ``[switches]``)."""
    from .rules import evaluate_all

    data = {f: getattr(spec, f) for f in FIELD_NAMES}
    return {k: int(v) for k, v in evaluate_all(rules()["switches"], data, RULES_LABEL).items()}


def size_values(spec: Spec) -> dict[str, int]:
    """Values for every size symbol of the spec's shape (spec.toml's ``[values]``): sizes that
    do not apply get 1 (they only ever appear multiplied by a switch that is off), layer
    counts 0."""
    from .rules import evaluate_all

    data = {f: getattr(spec, f) for f in FIELD_NAMES}
    out = {f: 1 if data[f] is None else data[f] for f in SIZE_FIELDS}
    out.update({f: data[f] or 0 for f in COUNT_FIELDS})
    out.update(evaluate_all(rules()["values"].items(), data, RULES_LABEL))
    return {k: v for k, v in out.items() if v is not None}
