"""qkv: a Transformer you can see through.

    model = qkv.GPT(qkv.ModelConfig(d_vocab=100))          # build
    result = qkv.train(text_path="book.txt", out="runs/book")  # train (or qkv train --text book.txt)
    model, tokenizer = qkv.load("runs/book")                 # load
    print(qkv.generate(model, tokenizer, "Once", 50))        # generate
"""

from .checkpoint import load, save
from .checks import CheckReport, check
from .config import PRESETS, ModelConfig, TrainConfig
from .explain.attend import Derivation, attend
from .models.gpt import GPT, lm_loss
from .nn.attention import KVCache, MultiHeadAttention, attention
from .sample import generate, generate_ids
from .tokenizers import BPETokenizer, CharTokenizer, Tokenizer, WordTokenizer, load_tokenizer, train_tokenizer
from .trace import Trace, trace_names
from .train import TrainingStopped, train

__version__ = "0.1.0"

__all__ = [
    "GPT", "ModelConfig", "TrainConfig", "PRESETS", "KVCache", "MultiHeadAttention", "attention", "lm_loss",
    "attend", "Derivation", "train", "TrainingStopped", "Trace", "trace_names", "check", "CheckReport", "generate", "generate_ids", "load", "save",
    "Tokenizer", "CharTokenizer", "WordTokenizer", "BPETokenizer", "train_tokenizer", "load_tokenizer",
]
