"""Decoding an encoder-decoder: the target sentence, token by token, greedy or by beam search.

The source is encoded once. Each step feeds the decoder only the newest target token: the KV
cache holds every earlier token's keys and values of the decoder's self-attention, and each
cross-attention layer's keys and values of the source are computed at the first step and reused
(KVCache.cross_kv). `use_cache=False` recomputes the whole target prefix every step instead; a
test proves the two give the same tokens and the same scores.

Beam search keeps the k most likely prefixes (by the sum of their tokens' log-probabilities);
a prefix that ends in </s> is finished, scored log P / length^length_penalty, and the search
stops when the best finished score cannot be beaten by any live prefix or max_len is reached.
Prefixes cut off at max_len without </s> are returned only when fewer than k finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from qkv.core.io.refusal import Refusal

BOS, EOS = 1, 2  # the ids of <s> and </s> (the translation tokenizer puts <pad>, <s>, </s> first)


@dataclass
class Hypothesis:
    ids: list[int]  # the target tokens, without <s>; with </s> at the end if it finished
    logprob: float  # log P(ids | source), the sum over its tokens
    score: float  # logprob / len(ids) ** length_penalty (what the beam ranks finished hypotheses by)
    token_logprobs: list[float] = field(default_factory=list)  # log P of each token as it was written; sum: logprob


def _check(model, max_len: int, beam: int = 1) -> None:
    if not model.family.translates:
        raise Refusal.of("errors.decode_not_translation")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= model.cfg.n_ctx:
        raise Refusal.of("errors.decode_max_len", n_ctx=model.cfg.n_ctx, got=repr(max_len))
    if isinstance(beam, bool) or not isinstance(beam, int) or not 1 <= beam <= 64:
        raise Refusal.of("errors.decode_beam", got=repr(beam))


class _Steps:
    """The decoder's next-token log-probabilities for growing prefixes, cached or recomputed."""

    def __init__(self, model, memory: torch.Tensor, src_mask: torch.Tensor | None, use_cache: bool):
        self.model, self.memory, self.src_mask = model, memory, src_mask
        self.cache = model.new_cache(memory.shape[0]) if use_cache else None

    def next(self, prefixes: torch.Tensor) -> torch.Tensor:
        """prefixes (B, t) starting with <s> -> log P(next token) (B, d_vocab)."""
        tokens = prefixes[:, -1:] if self.cache is not None else prefixes  # with a cache only the newest token is new
        logits = self.model.decode(tokens, self.memory, self.src_mask, self.cache)[:, -1]  # (B, d_vocab)
        return logits.double().log_softmax(-1)

    def keep(self, index: torch.Tensor) -> None:
        """Continue the rows `index` picks (beam search)."""
        self.memory = self.memory.index_select(0, index)
        self.src_mask = None if self.src_mask is None else self.src_mask.index_select(0, index)
        if self.cache is not None:
            self.cache.reorder(index)


@torch.inference_mode()
def greedy(
    model,
    src_ids: torch.Tensor,
    src_mask: torch.Tensor | None = None,
    max_len: int | None = None,
    use_cache: bool = True,
) -> list[Hypothesis]:
    """The most likely next token at every step, for a batch of sources (B, S) at once."""
    max_len = max_len or model.cfg.n_ctx
    _check(model, max_len)
    steps = _Steps(model, model.encode(src_ids, src_mask), src_mask, use_cache)
    B = src_ids.shape[0]
    prefixes = torch.full((B, 1), BOS, dtype=torch.long, device=src_ids.device)  # (B, 1): <s>
    per_step: list[torch.Tensor] = []  # (B,) per step: log P of the token each source's translation wrote there
    done = torch.zeros(B, dtype=torch.bool)
    lengths = torch.full((B,), max_len)
    for t in range(max_len):
        logp = steps.next(prefixes)  # (B, d_vocab)
        best = logp.argmax(-1)  # (B,)
        per_step.append(torch.where(done, 0.0, logp.gather(1, best[:, None])[:, 0].cpu().double()))
        prefixes = torch.cat([prefixes, best[:, None]], 1)  # (B, t + 2)
        ended = ~done & (best.cpu() == EOS)
        lengths[ended] = t + 1
        done |= ended
        if done.all():
            break
    written = torch.stack(per_step, 1)  # (B, steps)
    out = []
    for b in range(B):
        n = int(lengths[b])
        ids, token_logprobs = prefixes[b, 1 : 1 + n].tolist(), written[b, :n].tolist()
        logprob = float(sum(token_logprobs))
        out.append(Hypothesis(ids, logprob, logprob / len(ids), token_logprobs))
    return out


def _sorted_out(top, logp, prefixes, history, beam: int, last: bool, norm, finished: list, cut: list):
    """One step's best candidates sorted out: those that end (with </s>, or cut at the last step) join
    `finished` or `cut`; the first `beam` of the rest live on, as (rows, tokens, scores, histories)."""
    keep_rows: list[int] = []
    keep_tokens: list[int] = []
    keep_scores: list[float] = []
    kept_history: list[list[float]] = []
    for value, flat in zip(top.values.tolist(), top.indices.tolist()):
        row, token = divmod(flat, logp.shape[1])
        written = history[row] + [float(logp[row, token])]
        if token == EOS or last:
            ids = prefixes[row, 1:].tolist() + [token]
            (finished if token == EOS else cut).append(Hypothesis(ids, value, norm(value, len(ids)), written))
        elif len(keep_rows) < beam:
            keep_rows.append(row)
            keep_tokens.append(token)
            keep_scores.append(value)
            kept_history.append(written)
    return keep_rows, keep_tokens, keep_scores, kept_history


@torch.inference_mode()
def beam_search(
    model,
    src_ids: torch.Tensor,
    beam: int = 4,
    max_len: int | None = None,
    length_penalty: float = 1.0,
    use_cache: bool = True,
) -> list[Hypothesis]:
    """The `beam` best translations of one source (1, S), best first."""
    max_len = max_len or model.cfg.n_ctx
    _check(model, max_len, beam)
    if src_ids.dim() == 1:
        src_ids = src_ids[None]  # (1, S)
    if src_ids.shape[0] != 1:
        raise ValueError("beam_search translates one source at a time")
    steps = _Steps(model, model.encode(src_ids), None, use_cache)
    prefixes = torch.full((1, 1), BOS, dtype=torch.long, device=src_ids.device)  # the live prefixes, with <s>
    scores = torch.zeros(1, dtype=torch.float64)  # log P of each live prefix
    history: list[list[float]] = [[]]  # log P of each token of each live prefix
    finished: list[Hypothesis] = []
    cut: list[Hypothesis] = []  # prefixes that reached max_len without </s>: a last resort
    norm = lambda logprob, n: logprob / n**length_penalty
    for t in range(max_len):
        logp = steps.next(prefixes).cpu()  # (live, d_vocab)
        total = (scores[:, None] + logp).flatten()  # (live * d_vocab,): every prefix extended by every token
        top = total.topk(min(2 * beam, total.numel()))  # enough that `beam` survive after the finished are taken out
        last = t == max_len - 1  # every candidate ends here: the target is as long as it may be
        keep_rows, keep_tokens, keep_scores, kept_history = _sorted_out(
            top, logp, prefixes, history, beam, last, norm, finished, cut
        )
        finished.sort(key=lambda h: -h.score)
        best_done = finished[beam - 1].score if len(finished) >= beam else None
        if not keep_rows or (best_done is not None and length_penalty == 0 and max(keep_scores) <= best_done):
            break  # with no length penalty a live prefix can only lose probability: it cannot overtake
        index = torch.tensor(keep_rows)
        steps.keep(index.to(prefixes.device))
        prefixes = torch.cat(
            [
                prefixes.index_select(0, index.to(prefixes.device)),
                torch.tensor(keep_tokens, device=prefixes.device)[:, None],
            ],
            1,
        )  # (live, t + 2)
        scores = torch.tensor(keep_scores, dtype=torch.float64)
        history = kept_history
        if (
            len(finished) >= beam
            and length_penalty > 0
            and _cannot_overtake(finished[beam - 1].score, keep_scores, max_len, length_penalty)
        ):
            break
    cut.sort(key=lambda h: -h.score)
    return (finished + cut)[:beam]


def _cannot_overtake(worst_kept: float, live: list[float], max_len: int, alpha: float) -> bool:
    """True when no live prefix can end with a better normalised score than the beam's worst finished one:
    its log P only falls, so the best it can do is its current log P divided by the longest length allowed."""
    return max(live) / max_len**alpha <= worst_kept if max(live) < 0 else False
