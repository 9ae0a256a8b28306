"""What qkv says about the speedrun's switches (spec/speedrun.py), in English (the same keys as zh/speedrun.py)."""

MESSAGES = {
    "gpt2_value_embeds": "GPT-2 has no value embeddings (value_embeds, a switch of the speedrun)",
    "llama_value_embeds": "Llama has no value embeddings (value_embeds, a switch of the speedrun)",
}
