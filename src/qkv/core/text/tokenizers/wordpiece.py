"""WordPiece, BERT's tokenizer, read from a Hugging Face tokenizer.json (or a BERT vocab.txt).

Text is lower-cased (for uncased models), split into words and punctuation, and each word into the
longest pieces found in the vocabulary: "embeddings" -> "em", "##bed", "##ding", "##s", where "##"
marks a piece that continues the word before it. `encode` adds [CLS] at the start and [SEP] at the
end, as the model was trained to see. `display` shows a continuation as "⁀bed" (the tie says: glued
to the piece before), `decode` glues continuations back and puts a space between words.
A word the vocabulary cannot spell becomes [UNK]: WordPiece never refuses text.
"""

from __future__ import annotations

import json
from pathlib import Path

from qkv.core.io.files import read_json_object
from qkv.core.text.tokenizers.base import FORMAT_VERSION, Tokenizer, read_tokenizer_file, read_tokenizer_json
from qkv.core.text.tokenizers.safety import encode, settle, shielded

JOIN = "⁀"  # shown instead of "##"


class WordPieceTokenizer(Tokenizer):
    kind = "wordpiece"
    max_length: int | None = None  # a sentence-transformers model's max_seq_length (its sentence embeddings cut there)

    def __init__(self, hf_tokenizer):
        # one text, its own tokens: no padding (batches are padded by the model's caller), no truncation (a text
        # longer than the model's n_ctx is an error there, not cut here), and what it may not do refused (safety.py)
        self.bound = settle(hf_tokenizer)
        self.hf = hf_tokenizer
        self.tokens = [hf_tokenizer.id_to_token(i) or "" for i in range(hf_tokenizer.get_vocab_size())]
        specials = [
            t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if hf_tokenizer.token_to_id(t) is not None
        ]
        self.special = {hf_tokenizer.token_to_id(t) for t in specials}
        self.pad_id = hf_tokenizer.token_to_id("[PAD]") or 0

    @classmethod
    def from_dir(cls, d: Path) -> WordPieceTokenizer:
        """From tokenizer.json, or else vocab.txt (lower-cased unless tokenizer_config.json's do_lower_case
        is false). Each file must be a regular one (a FIFO or a device is refused: files.py)."""
        if (d / "tokenizer.json").exists():
            return cls(read_tokenizer_json(d / "tokenizer.json"))
        if not (d / "vocab.txt").exists():
            raise ValueError(f"{d} has no tokenizer.json or vocab.txt: cannot read its WordPiece tokenizer")
        from tokenizers.implementations import BertWordPieceTokenizer

        conf, lower = d / "tokenizer_config.json", True
        if conf.exists():
            lower = read_json_object(conf).get("do_lower_case", True)
            if not isinstance(lower, bool):
                raise ValueError(f"{conf}: field 'do_lower_case' must be true or false; got {lower!r}")
        vocab = d / "vocab.txt"
        return cls(read_tokenizer_file(vocab, lambda: BertWordPieceTokenizer(str(vocab), lowercase=lower)._tokenizer))

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def encode(self, text: str) -> list[int]:
        return encode(self.hf, text, self.bound)  # [CLS] pieces [SEP]

    def unspellable(self, text: str) -> list[str]:
        """The characters of `text` read as [UNK] (or dropped: control characters) when each is alone
        (a word holding one of them is [UNK] whole), each once, in text order."""
        unk = self.hf.token_to_id("[UNK]")
        out = []
        for c in dict.fromkeys(text):
            ids = encode(self.hf, c, self.bound, add_special_tokens=False)
            if (unk is not None and unk in ids) or (not ids and not c.isspace()):
                out.append(c)
        return out

    def pieces(self, text: str) -> list[str]:
        """The tokens of `text` as the vocabulary spells them ("##" kept)."""
        return shielded(self.hf.encode, text).tokens

    def is_continuation(self, id: int) -> bool:
        return self.tokens[self._check_id(id)].startswith("##")

    def token_bytes(self, id: int) -> bytes:
        token = self.tokens[self._check_id(id)]
        return (token[2:] if token.startswith("##") else token).encode("utf-8")

    def separator(self, prev: int | None, id: int) -> bytes:
        return b"" if prev is None or self.is_continuation(id) else b" "

    def display(self, id: int) -> str:
        token = self.tokens[self._check_id(id)]
        return JOIN + token[2:] if token.startswith("##") and len(token) > 2 else token

    def to_dict(self) -> dict:
        return {"kind": self.kind, "version": FORMAT_VERSION, "hf_tokenizer": json.loads(self.hf.to_str())}
