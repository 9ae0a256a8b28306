"""Notebook 03: positions on and off (我打你 / 你打我) on the bundled model, and the causal mask's leak.

It measures with qkv.analysis.no_positions (without_positions, order_pair), on the sentence pair the
web page's guided tour uses in its positions step (tour_measure.js), so both give the same numbers."""

CELLS = [
    (
        "md",
        """
# 位置开与关：「我 打了 你」和「你 打了 我」

第二篇文章说：Transformer 并行地读所有词，如果不加位置信息，「我打你」和「你打我」在它看来是同一堆词。
这个笔记本用 qkv 自带的模型（它学过一张位置嵌入表 W_pos）把这句话量一量：位置开着是什么样，
把位置关掉又是什么样。结论比“一堆词”更有意思：只关掉位置还不够，因果掩码会从后门把顺序漏进来。

用的是网页导览“位置”那一步的同一对句子和同一个函数，所以这里的数字和导览里的一样。
层、头和位置都从 0 开始数。
""",
        """
# Positions on and off: 「我 打了 你」 and 「你 打了 我」

The second article says: a Transformer reads all words at once, so without positional information
"I hit you" and "you hit me" are the same bag of words to it. This notebook measures that sentence on
qkv's bundled model (which has learned a table of position embeddings, W_pos): with positions on, and
with them switched off. The answer is more interesting than "a bag of words": switching positions off
is not enough, because the causal mask lets order in through the back door.

It uses the same sentence pair and the same function as the positions step of the web page's guided
tour, so the numbers here are the tour's. Layers, heads and positions count from 0.
""",
    ),
    (
        "code",
        """
import torch

import qkv
from qkv.analysis.no_positions import order_pair, without_positions

qkv.set_lang("__LANG__")
model, tokenizer = qkv.load()
print(model.cfg.pos, model.cfg.causal)
""",
    ),
    (
        "md",
        """
## 1. 关掉位置

`without_positions(model)` 给出同一个模型的“无位置”版本：权重完全共用，只是不再加位置向量，
每个词元的输入就是它的词向量 x = W_E[词元]。

`order_pair` 把两句话在位置开、关两种情况下各跑一遍。两句用同样的四个词元，只是「我」和「你」
换了位置；`perm[j]` 记下第一句的第 j 个词元在第二句的哪个位置。
""",
        """
## 1. Switching positions off

`without_positions(model)` gives the same model without positions: every weight is shared, only no
position vector is added, so each token's input is its word vector alone, x = W_E[token].

`order_pair` runs both sentences with positions on and off. The two sentences use the same four tokens
with 「我」 (I) and 「你」 (you) swapped; `perm[j]` records where the first sentence's token j stands in
the second one.
""",
    ),
    (
        "code",
        """
a, b = "我 打了 你 ，", "你 打了 我 ，"
nopos = without_positions(model)
d = order_pair(model, tokenizer, a, b)
perm = d["perm"]
print(d["a"]["tokens"], d["b"]["tokens"], perm)
""",
    ),
    (
        "md",
        """
## 2. 最后一个词元的注意力：同一组权重，只是换了顺序？

对每一层、每个头，取最后那个逗号的注意力权重。如果模型把句子当成一堆词，第二句的权重应该正好是
第一句的权重按 `perm` 重新排列。`d["leak"]` 就是两者之差的最大值（每层取所有头、所有键中最大的）。
""",
        """
## 2. The last token's attention: the same weights, only reordered?

For every layer and head, take the final comma's attention weights. If the model saw a bag of words,
the second sentence's weights would be exactly the first one's rearranged by `perm`. `d["leak"]` is
the largest difference between the two (per layer, the largest over its heads and keys).
""",
    ),
    (
        "code",
        """
def fmt(xs):
    return [f"{x:.2g}" for x in xs]


print("positions on: ", fmt(d["leak"]["on"]))
print("positions off:", fmt(d["leak"]["off"]))
rows = d["rows"]["off"]  # (L, H, T) lists: layer 0, head 0
print([round(x, 3) for x in rows["a"][0][0]])
print([round(x, 3) for x in rows["b"][0][0]])
""",
    ),
    (
        "md",
        """
位置开着的时候，层 0 就差了约 0.12：同一个词在不同位置加上了不同的位置向量。位置关掉以后，
**层 0 的差正好是 0**：上面打印的两行是同一组权重，只是「我」和「你」的那两个数交换了位置。
原因很直接：在层 0，每个键和值只取决于它自己的词，逗号的查询也相同，于是分数只是换了顺序，
softmax 和加权求和都不在乎顺序。

可从层 1 起，差又变大了（层 1 约 0.67，层 2 约 0.97，层 3 约 0.93），和位置开着时（0.72、0.95、0.9）
差不多。这就是因果掩码漏进来的顺序：两句里「打了」都在位置 1，可它只能看到自己和前面的词，
第一句里前面是「我」，第二句里是「你」。两个「打了」从层 0 出来时已经混进了不同的东西，进入层 1
时的键就不一样了。下面直接比较每一层的键 k（按 `perm` 对齐之后）：
""",
        """
With positions on, layer 0 already differs by about 0.12: the same word gets a different position
vector at another position. With positions off, **layer 0 differs by exactly 0**: the two rows printed
above are the same weights, with the numbers of 「我」 and 「你」 swapped. The reason is direct: at
layer 0 each key and value depends only on its own word, and the comma's query is the same, so the
scores are merely reordered, and neither softmax nor the weighted sum cares about order.

From layer 1 on, though, the difference is back (about 0.67 in layer 1, 0.97 in layer 2, 0.93 in
layer 3), close to what it is with positions on (0.72, 0.95, 0.9). This is order leaking in through
the causal mask: in both sentences 「打了」 (hit) is at position 1, and it sees only itself and the words
before it: 「我」 in the first sentence, 「你」 in the second. The two 「打了」 leave layer 0 having mixed
in different things, so their keys entering layer 1 differ. Here are the keys k of every layer, with
positions off, compared after aligning them by `perm`:
""",
    ),
    (
        "code",
        """
_, ta = nopos.run_with_trace(torch.tensor([d["a"]["ids"]]))
_, tb = nopos.run_with_trace(torch.tensor([d["b"]["ids"]]))
# k: (B, T, n_heads, d_head); b's position perm[j] holds a's token j
gaps = [(tb["k", L][0, perm] - ta["k", L][0]).abs().max().item() for L in range(model.cfg.n_layers)]
print("k, positions off:", fmt(gaps))
""",
    ),
    (
        "md",
        """
## 3. 再去掉因果掩码，顺序才真正消失

这一步是笔记本额外加的，导览里没有，qkv 也没有现成的函数：用同样的权重搭一个不带因果掩码的模型
（`causal=False`，每个词元都能看到整句），再用 `order_pair` 量它。这时位置关掉的那一行每一层都只是
换了顺序，差值只剩浮点舍入（1e-7 左右）。
""",
        """
## 3. Drop the causal mask too, and order is really gone

This step is the notebook's own (the tour does not take it, and qkv has no function for it): build a
model with the same weights but without the causal mask (`causal=False`, every token sees the whole
sentence), and measure it with `order_pair`. Now, with positions off, every layer is merely
reordered, and the differences are rounding (around 1e-7).
""",
    ),
    (
        "code",
        """
bag = qkv.GPT(qkv.ModelConfig(**{**model.cfg.to_dict(), "causal": False}))  # no causal mask
bag.load_state_dict(model.state_dict())
bag.eval()
print("positions off, causal = False:", fmt(order_pair(bag, tokenizer, a, b)["leak"]["off"]))
""",
    ),
    (
        "md",
        """
## 4. 模型会说谁哭了吗？

语料里打人的句子后面接着“被打的人 哭了”。看逗号之后的下一个词：位置开着时，两句的答案相反，都对；
只关掉位置，答案仍然相反——顺序从掩码漏进来，模型照样用上了；连掩码也去掉，两句得到的是一模一样的
分布，它再也分不出谁打了谁。
""",
        """
## 4. Does the model say who cried?

In the corpus a sentence about hitting is followed by "the one who was hit cried". Look at the next
word after the comma: with positions on, the two sentences get opposite answers, both right. With
positions off the answers are still opposite: order leaks in through the mask and the model uses it.
Drop the mask as well and both sentences get exactly the same distribution: it can no longer tell
who hit whom.
""",
    ),
    (
        "code",
        """
def top(m, text, k=3):
    _, trace = m.run_with_trace(torch.tensor([tokenizer.encode(text)]))
    p = trace["logits"][0, -1].softmax(-1)
    v, i = p.topk(k)
    return [(tokenizer.display(j), round(x, 3)) for x, j in zip(v.tolist(), i.tolist())]


for m in (model, nopos, without_positions(bag)):
    print(top(m, a), top(m, b))
""",
    ),
    (
        "md",
        """
`qkv lesson order` 做的是同一件事的完整版本：分别训练不用位置、学习式位置、正弦位置和 RoPE 的小模型，
用几十对只交换了施受双方的句子去测它们（要跑一两分钟）。

## 5. 在页面里看

下面是关掉位置的那个模型，打开在层 0、最后的逗号上。把层换到 1，再把这个页面和上面的数字对照着看。
""",
        """
`qkv lesson order` is the full version of this: it trains small models with no positions, learned
positions, sinusoidal positions and RoPE, and tests them on dozens of sentence pairs that only swap
who does what to whom (it takes a minute or two).

## 5. See it on the page

Below is the model with positions off, opened on layer 0 and the final comma. Switch to layer 1 and
read the page alongside the numbers above.
""",
    ),
    ("code", "qkv.show(nopos, tokenizer, b, layer=0, head=0, token=-1)"),
]
