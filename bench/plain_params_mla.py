"""The peer for an MLA + MoE model: a plain-Python parameter count of a DeepSeek-V2/V3
config.json, as people write it by hand (no symcalc, no sympy).
Usage: python bench/plain_params_mla.py CONFIG.json"""
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    c = json.load(f)
d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
n_h, r_q, r_kv = c["num_attention_heads"], c.get("q_lora_rank"), c["kv_lora_rank"]
nope, rope, dv = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
q = d * r_q + r_q + r_q * n_h * (nope + rope) if r_q else d * n_h * (nope + rope)
attention = q + d * (r_kv + rope) + r_kv + r_kv * n_h * (nope + dv) + n_h * dv * d
E, E_s, w = c["n_routed_experts"], c.get("n_shared_experts") or 0, c["moe_intermediate_size"]
moe = d * E + 3 * d * w * (E + E_s)  # V3's score-correction bias is a buffer, not counted
dense = 3 * d * c["intermediate_size"]
k_dense = c.get("first_k_dense_replace", 0)
head = 0 if c.get("tie_word_embeddings", False) else V * d
print(V * d + L * (attention + 2 * d) + k_dense * dense + (L - k_dense) * moe + d + head)
