"""Fine-tuning (`qkv train --init`, qkv.core.train.init) and the export of a Llama-layout model
(qkv.core.hub.adapters.llama_export), in English (the same keys as zh/finetune.py)."""

MESSAGES = {
    "data_tokenizer": "the token data was written with another tokenizer than {ref}'s; tokenize the text with "
    "it (qkv tokenize --tokenizer {ref}) or train on the text itself (--text)",
    "task": "--init fine-tunes a GPT (a model that continues text); qkv train --task translate has no --init",
    "flags": ("{flags} shapes a new tokenizer; with --init the run keeps the init's tokenizer: leave {flags} out"),
    "model_settings": (
        "with --init the model is the init's: --set cannot change {names}; of the model's settings only "
        "{allowed} may be set (training settings such as lr, steps, batch_size, block_size all may)"
    ),
    "missing": "--init {ref}: no such file or directory (give a qkv run, a Hugging Face directory, a .gguf file, "
    "smollm2 or hf:NAME)",
    "not_gpt": "--init {ref} is {family}, which does not continue text: fine-tuning starts from a GPT",
    "too_large": (
        "fine-tuning {ref} needs about {need} (weights, gradients and AdamW's two moments in float32, and the "
        "logits of a batch), more than the {have} available: try a smaller batch_size or block_size"
    ),
    "block_size": (
        "block_size={block_size} is longer than the model's context (n_ctx={n_ctx}): give a block_size of at most "
        "{n_ctx}"
    ),
    "preset_needs_init": (
        "the preset finetune holds training settings only: use it with --init (a model to start from)"
    ),
    # the export of a Llama-layout model (hub/adapters/llama_export.py)
    "llama_cannot_export": (
        "qkv export --hf writes GPT-2's layout (learned positions, LayerNorm, a plain MLP) or Llama's (RoPE on "
        "halves, RMSNorm, SwiGLU, grouped-query attention, tied or untied); this model has RMSNorm but Llama "
        "cannot compute {problems}"
    ),
    "llama_rope": "pos={pos}, rope_layout={layout}, rotary_dim or RoPE factors (Llama rotates whole heads in halves)",
    "llama_block": "a block other than pre-norm, residual, causal, values=v, with a gated silu MLP",
    "llama_parts": "q/k norms, biases on q, k, v only, embedding scaling, or a bias on the unembedding",
    "llama_window": "{name} (Gemma's or Mistral's switch)",
    "export_differs": (
        "the exported Llama computes other logits than the qkv model (they differ by {gap}); a setting of this "
        "model has no counterpart in Llama"
    ),
}
