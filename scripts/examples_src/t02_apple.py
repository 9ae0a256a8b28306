"""Notebook 02: 苹果 in two contexts on the bundled model (the first article's 5.6-5.7)."""

CELLS = [
    (
        "md",
        """
# 两句话里的「苹果」

「我吃了苹果」和「我投资了苹果」里的「苹果」，进入模型时是嵌入表里的同一行：向量一模一样。
一个固定的线性变换 xW 对同样的输入只能给出同样的输出，分不出水果还是公司。
第一篇文章说，让它们分开的是注意力：z = Σ a_j v_j 把别的词的信息混进来。
这个笔记本在 qkv 自带的小模型上把这件事量出来。

层、头和位置都从 0 开始数。
""",
        """
# 苹果 ("apple") in two sentences

In 「我 吃了 苹果」 ("I ate an apple") and 「我 投资了 苹果」 ("I invested in Apple") the word 苹果
enters the model as the same row of the embedding table: the very same vector. A fixed linear map xW
gives the same output for the same input, so it cannot tell the fruit from the company. The first
article says attention is what separates them: z = Σ a_j v_j mixes in what the other words carry.
This notebook measures that on qkv's bundled model.

Layers, heads and positions count from 0.
""",
    ),
    (
        "code",
        """
import torch

import qkv
import qkv.lessons

qkv.set_lang("__LANG__")
model, tokenizer = qkv.load()
""",
    ),
    (
        "md",
        """
## 1. 从完全相同到渐渐分开

两句都是 4 个词元，「苹果」都在位置 2，所以连位置向量也相同。我们取出「苹果」在每一层之后的
残差流向量，算两句之间的余弦相似度：1 表示方向完全一样。
""",
        """
## 1. From identical to apart

Both sentences have 4 tokens with 苹果 at position 2, so even its position vector is the same. We take
苹果's residual-stream vector after each layer and compute the cosine similarity between the two
sentences: 1 means the very same direction.
""",
    ),
    (
        "code",
        """
a, b = "我 吃了 苹果 ，", "我 投资了 苹果 ，"
_, ta = model.run_with_trace(torch.tensor([tokenizer.encode(a)]))
_, tb = model.run_with_trace(torch.tensor([tokenizer.encode(b)]))
pos = 2
names = ["hook_embed"] + [f"blocks.{L}.hook_resid_post" for L in range(model.cfg.n_layers)]
for name in names:
    cos = torch.nn.functional.cosine_similarity(ta[name][0, pos], tb[name][0, pos], dim=0)
    print(f"{name:24s} {cos.item():.4f}")
""",
    ),
    (
        "md",
        """
嵌入处是 1.0000：模型一开始确实分不出两个「苹果」。从层 0 起，注意力把「吃了」或「投资了」的信息
加了进来，两个向量就开始分开，越往后层分得越开。它们依然相当接近，因为向量的大部分还是「苹果」
自己带来的；不同的那一部分，正是上下文写进去的。
""",
        """
At the embedding the cosine is 1.0000: at first the model cannot tell the two apples apart. From
layer 0 on, attention adds what 「吃了」 (ate) or 「投资了」 (invested in) carries, and the two vectors
drift apart, further with every layer. They stay fairly close, because most of each vector is still
what 苹果 itself brought; the part that differs is what the context wrote in.
""",
    ),
    (
        "md",
        """
## 2. 哪个头读了提示词

`context` 这一课把这件事做成一个完整的实验：逐层比较两个「苹果」、训练一个线性探针、再用激活修补
找出携带词义的头。它在所有头里找到最后那个逗号对提示词（「吃了」或「投资了」）权重最大的头。
""",
        """
## 2. Which head reads the cue

The lesson `context` makes a full experiment of this: it compares the two apples layer by layer,
trains a linear probe, and uses activation patching to find the heads that carry the sense. Among
all heads it finds the one in which the final comma weighs the cue (「吃了」 or 「投资了」) most.
""",
    ),
    (
        "code",
        """
lesson = qkv.lessons.run("context")
print(lesson.headline)
cue = lesson.measured.patch_cue_head
L, h = cue.layer, cue.head
print(L, h, cue.cue)
for t in (ta, tb):
    print(t["pattern", L][0, h, -1].numpy().round(3))
""",
    ),
    (
        "md",
        """
在这个头里，两句的逗号都把绝大部分权重给了位置 1 的动词。于是这个头的输出 z 在两句里分别是
「吃了」和「投资了」的 value：同一个位置、同一套权重，取回的内容却不同——这正是 V 的作用。
""",
        """
In this head the comma of both sentences gives nearly all its weight to the verb at position 1. So
this head's output z is 「吃了」's value in one sentence and 「投资了」's in the other: the same
position, the same weights, different content fetched. That is what V is for.
""",
    ),
    (
        "md",
        """
## 3. 模型接下来说什么

最后看逗号之后的下一个词：吃过的苹果后面多半说「味道」，投资的苹果后面多半说「股价」。
""",
        """
## 3. What the model says next

Finally, the next word after the comma: after the apple that was eaten the model expects 「味道」
(taste), after the one invested in 「股价」 (share price).
""",
    ),
    (
        "code",
        """
for t in (ta, tb):
    p = t["logits"][0, -1].softmax(-1)
    top = p.topk(3)
    print([(tokenizer.display(i), round(v, 3)) for v, i in zip(top.values.tolist(), top.indices.tolist())])
""",
    ),
    (
        "md",
        """
## 4. 在页面里看

下面的页面打开在这个头上，查询是最后的逗号。换到别的头，看看还有哪些头也在读提示词；
点一下「苹果」，看它自己在看哪里。
""",
        """
## 4. See it on the page

The page below opens on this head, with the final comma as the query. Switch to other heads and see
which others read the cue too; click 苹果 to see where it looks itself.
""",
    ),
    ("code", "qkv.show(model, tokenizer, b, layer=L, head=h, token=-1)"),
]
