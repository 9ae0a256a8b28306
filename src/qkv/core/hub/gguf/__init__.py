"""GGUF files (llama.cpp's and ollama's format) read into qkv models: one concept per module.

header.py     the header: metadata and tensor descriptions, every count checked against the file
archs.py      each GGUF architecture as a Hugging Face layout a hub adapter reads (config, names)
families.py   llama.cpp's tensor names and metadata keys of each architecture, as Hugging Face's
layouts.py    what llama.cpp's converter did to a family's tensors (rows reordered, transposed, 1 + w)
tensors.py    a tensor dequantized a few rows at a time into a parameter, its layout undone
tokenizer.py  the tokenizer the metadata describes (byte-level BPE or SentencePiece's pieces)
find.py       which references name a GGUF file ("x.gguf", a directory with one, "smollm2")
load.py       all of it: (model, tokenizer)
summary.py    what `qkv info` says of a file, from its header alone
"""
