"""transformers' own count: instantiate the model on the meta device (no weights) and ask
num_parameters(). Usage: python bench/hf_meta.py CONFIG.json"""
import json
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

with open(sys.argv[1], encoding="utf-8") as f:
    data = json.load(f)
config = AutoConfig.for_model(**data)
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config)
print(model.num_parameters())
