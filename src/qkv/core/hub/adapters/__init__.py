"""One adapter per family of Hugging Face models, each a module whose ADAPTER (hub.adapter.Adapter) holds
the family's config map, weight map and tokenizer reading: gpt2 (GPT-2, both directions), llama (Llama,
Mistral, Qwen2, Qwen3) and bert (BERT, MiniLM). hub.adapter's registry reads every module here."""
