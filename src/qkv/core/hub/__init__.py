"""Other people's models: Hugging Face directories read (pretrained: which directory; adapter and
adapters/: one adapter per family, with its config map, weight map and tokenizer; read, weights, size,
fields: the reading every family shares) and written (export), torch.nn.Transformer's weights, and the
models bundled with qkv."""
