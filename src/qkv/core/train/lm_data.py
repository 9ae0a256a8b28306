"""Training a GPT on token data (`qkv train --data DATA`): ids written by `qkv tokenize`, memory-mapped.

The same task as lm.LMTask, but what it reads is a data folder (qkv.core.text.shards), not a text:
its tokenizer is the folder's (a new run trains none), its ids are read from disk window by window
(each rank reads only its rows of each global batch: batches.get_batch), and the split is the one
`--text` makes of a text's ids: the last int(tokens × val_fraction) tokens are the validation part
(batches.split_ids). A run is tied to its data by the index's sha256 (of the tokenizer and each
shard's ids, computed when they were written): a resume compares it and reads no shard whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qkv.core.io.refusal import phrase
from qkv.core.machine.device import Precision
from qkv.core.machine.processes import World
from qkv.core.spec.config import TrainConfig
from qkv.core.text.batches import split_ids
from qkv.core.text.shards import TokenData, open_data
from qkv.core.text.tokenizers import Tokenizer
from qkv.core.train.lm import LMData, LMTask
from qkv.core.train.loop import Start


@dataclass(frozen=True)
class ShardTask(LMTask):
    """A GPT's training on a data folder: LMTask's batches, over ids on disk."""

    what = phrase("shards.data_what")

    data_path: str | Path | None = None

    def recall(self, config: dict, out: Path) -> ShardTask:
        return self

    def read(self, tc: TrainConfig) -> tuple[TokenData, dict]:  # type: ignore[override]
        data = open_data(self.data_path)
        return data, data.origin()

    def new_tokenizer(self, data: TokenData) -> Tokenizer:  # type: ignore[override]
        return data.tokenizer

    def batches(self, data: TokenData, origin: dict, start: Start, world: World, precision: Precision):  # type: ignore[override]
        """LMData over the folder's ids, split into train / val as a text's are; config.json records the origin and the token count."""
        n_ctx = start.model.cfg.n_ctx
        ids = data.ids.limited(start.model.cfg.d_vocab)  # an id the model has no row for is refused as it is read
        train_ids, val_ids = split_ids(ids, start.tc.val_fraction, n_ctx)
        lm_data = LMData(train_ids, val_ids, start.tc, n_ctx, world, precision)  # type: ignore[arg-type]
        return lm_data, {"data": {**origin, "tokens": len(ids)}}
