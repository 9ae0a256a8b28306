"""Notebook 03: positions on and off (我打你 / 你打我) on the bundled model, and the causal mask's leak."""

CELLS = [
    (
        "md",
        """
# 位置开与关：「我 打了 你」和「你 打了 我」

第二篇文章说：Transformer 并行地读所有词，如果不加位置信息，「我打你」和「你打我」在它看来是同一堆词。
这个笔记本用 qkv 自带的模型（它学过一张位置嵌入表 W_pos）把这句话量一量：位置开着是什么样，
把位置关掉又是什么样。结论比“一堆词”更有意思：只关掉位置还不够，因果掩码会从后门把顺序漏进来。

层、头和位置都从 0 开始数。
""",
        """
# Positions on and off: 「我 打了 你」 and 「你 打了 我」

The second article says: a Transformer reads all words at once, so without positional information
"I hit you" and "you hit me" are the same bag of words to it. This notebook measures that sentence on
qkv's bundled model (which has learned a table of position embeddings, W_pos): with positions on, and
with them switched off. The answer is more interesting than "a bag of words": switching positions off
is not enough, because the causal mask lets order in through the back door.

Layers, heads and positions count from 0.
""",
    ),
    (
        "code",
        """
import copy

import torch

import qkv

qkv.set_lang("__LANG__")
model, tokenizer = qkv.load()
print(model.cfg.pos, model.cfg.causal)
""",
    ),
    (
        "md",
        """
## 1. 关掉位置

复制一份模型，把位置嵌入表清零：每个位置加上的都是零向量，模型只剩下词本身。两句话用同样的五个
词元，只是「我」和「你」换了位置；`perm` 记下第二句的每个位置对应第一句的哪个位置。
""",
        """
## 1. Switching positions off

Copy the model and zero its position table: every position now adds a zero vector, and the model has
only the words themselves. The two sentences use the same five tokens with 「我」 (I) and 「你」 (you)
swapped; `perm` records which position of the first sentence each position of the second one holds.
""",
    ),
    (
        "code",
        """
nopos = copy.deepcopy(model)
with torch.no_grad():
    nopos.pos_embed.W_pos.zero_()

a, b = "上周末 我 打了 你 ，", "上周末 你 打了 我 ，"
ia, ib = tokenizer.encode(a), tokenizer.encode(b)
perm = [ia.index(t) for t in ib]
print([tokenizer.display(i) for i in ia])
print([tokenizer.display(i) for i in ib])
print(perm)
""",
    ),
    (
        "md",
        """
## 2. 最后一个词元的注意力：同一组权重，只是换了顺序？

对每一层、每个头，取最后那个逗号的注意力权重。如果模型把句子当成一堆词，第二句的权重应该正好是
第一句的权重按 `perm` 重新排列。下面打印的是两者之差的最大值（每层取所有头中最大的）。
""",
        """
## 2. The last token's attention: the same weights, only reordered?

For every layer and head, take the final comma's attention weights. If the model saw a bag of words,
the second sentence's weights would be exactly the first one's rearranged by `perm`. Printed below is
the largest difference between the two (per layer, the largest over its heads).
""",
    ),
    (
        "code",
        """
def run(m):
    _, ta = m.run_with_trace(torch.tensor([ia]))
    _, tb = m.run_with_trace(torch.tensor([ib]))
    return ta, tb


def permuted_gap(ta, tb, name):
    gaps = []
    for L in range(model.cfg.n_layers):
        if name == "pattern":
            x, y = ta["pattern", L][0, :, -1], tb["pattern", L][0, :, -1]
            gaps.append((y - x[:, perm]).abs().max().item())
        else:
            x, y = ta[name, L][0], tb[name, L][0]
            gaps.append((y - x[perm]).abs().max().item())
    return [f"{g:.2g}" for g in gaps]


on, off = run(model), run(nopos)
print("W_pos:   ", permuted_gap(*on, "pattern"))
print("W_pos = 0:", permuted_gap(*off, "pattern"))
print(off[0]["pattern", 0][0, 0, -1].numpy().round(3))
print(off[1]["pattern", 0][0, 0, -1].numpy().round(3))
""",
    ),
    (
        "md",
        """
位置开着的时候，每一层都差得很远：同一个词在不同位置有不同的向量。位置关掉以后，**层 0 的差是 0**：
上面打印的两行是同一组权重，只是「我」和「你」的那两个数交换了位置。原因很直接：在层 0，每个
键和值只取决于它自己的词，逗号的查询也相同，于是分数只是换了顺序，softmax 和加权求和都不在乎顺序。

可从层 1 起，差又变大了。这就是因果掩码漏进来的顺序：第一句里「我」在位置 1，只能看到
「上周末 我」；第二句里「我」在位置 3，能看到「上周末 你 打了 我」。两个「我」从层 0 出来时已经
混进了不同的东西，进入层 1 时的键就不一样了。下面直接比较每一层的键 k（按 `perm` 对齐之后）：
""",
        """
With positions on, every layer differs widely: the same word has a different vector at another
position. With positions off, **layer 0 differs by 0**: the two rows printed above are the same
weights, with the numbers of 「我」 and 「你」 swapped. The reason is direct: at layer 0 each key and
value depends only on its own word, and the comma's query is the same, so the scores are merely
reordered, and neither softmax nor the weighted sum cares about order.

From layer 1 on, though, the difference is back. This is order leaking in through the causal mask:
in the first sentence 「我」 is at position 1 and sees only 「上周末 我」; in the second it is at
position 3 and sees 「上周末 你 打了 我」. The two 「我」 leave layer 0 having mixed in different things,
so their keys entering layer 1 differ. Here are the keys k of every layer, compared after aligning
them by `perm`:
""",
    ),
    ("code", 'print("k, W_pos = 0:", permuted_gap(*off, "k"))'),
    (
        "md",
        """
## 3. 再去掉因果掩码，顺序才真正消失

用同样的权重（位置仍是零）搭一个不带因果掩码的模型：每个词元都能看到整句。这时每一层都只是换了顺序，
差值只剩浮点舍入。
""",
        """
## 3. Drop the causal mask too, and order is really gone

Build a model with the same weights (positions still zero) but without the causal mask: every token
sees the whole sentence. Now every layer is merely reordered, and the differences are rounding.
""",
    ),
    (
        "code",
        """
cfg = qkv.ModelConfig(**{**nopos.cfg.to_dict(), "causal": False})
bag = qkv.GPT(cfg)
bag.load_state_dict(nopos.state_dict())
bag.eval()
print("W_pos = 0, causal = False:", permuted_gap(*run(bag), "pattern"))
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
def top(trace, k=3):
    p = trace["logits"][0, -1].softmax(-1)
    v, i = p.topk(k)
    return [(tokenizer.display(j), round(x, 3)) for x, j in zip(v.tolist(), i.tolist())]


for m in (model, nopos, bag):
    ta, tb = run(m)
    print(top(ta), top(tb))
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
