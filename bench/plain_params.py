"""The peer: a plain-Python parameter count of a Llama/Mistral-style config.json (what people
write by hand: no symcalc, no sympy). Usage: python bench/plain_params.py CONFIG.json"""
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    c = json.load(f)
d, L, V, ff = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"], c["intermediate_size"]
n_h = c["num_attention_heads"]
n_kv = c.get("num_key_value_heads") or n_h
d_h = c.get("head_dim") or d // n_h
attention = d * n_h * d_h + 2 * d * n_kv * d_h + n_h * d_h * d  # q, k, v, o (no biases)
mlp = 3 * d * ff  # gate, up, down
norms = 2 * d  # two RMSNorm weights per layer
head = 0 if c.get("tie_word_embeddings", False) else V * d
print(V * d + L * (attention + mlp + norms) + d + head)
