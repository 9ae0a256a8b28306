"""Other people's models: Hugging Face directories read and written (pretrained, gpt2, llama,
hf_config, weights, size, export), torch.nn.Transformer's weights, and the models bundled with qkv."""
