"""qkv: a Transformer you can see through."""

from .config import PRESETS, ModelConfig, TrainConfig
from .models.gpt import GPT, lm_loss
from .nn.attention import KVCache, attention

__version__ = "0.1.0"
