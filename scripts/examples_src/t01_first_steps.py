"""Notebook 01: the first article's worked example (z = (1, 1)), then the same on the bundled model."""

CELLS = [
    (
        "md",
        """
# 第一步：亲手算出 z = (1, 1)

第一篇文章第 5 章用一个二维的小例子，把注意力的三步串成一次手算：点积打分，softmax 把分数变成权重，
再按权重把各个 Value 加起来，最后得到 z = (1, 1)。这个笔记本先让 qkv 把这个例子一步一步算给你看，
再到一个真正训练过的小模型里，找到同样的结构。

全程离线，在笔记本电脑上一分钟以内跑完。层、头和位置都从 0 开始数。
""",
        """
# First steps: computing z = (1, 1) yourself

Chapter 5 of the first article works through one tiny attention computation in two dimensions: dot
products give scores, softmax turns the scores into weights, and the weights mix the values, giving
z = (1, 1). This notebook has qkv redo that example step by step, then finds the same structure
inside a small trained model.

Everything runs offline, in under a minute on a laptop. Layers, heads and positions count from 0.
""",
    ),
    ("code", 'import qkv\nimport qkv.lessons\n\nqkv.set_lang("__LANG__")'),
    (
        "md",
        """
`qkv.set_lang("zh")` 让 qkv 说中文：下面的推导、表格、图和 `qkv.show` 打开的页面都用中文。
换成 `"en"` 就全部变成英文。
""",
        """
`qkv.set_lang("en")` makes qkv speak English: the derivations, tables, figures and the page that
`qkv.show` opens below all follow it. Put `"zh"` there and everything turns Chinese.
""",
    ),
    (
        "md",
        """
## 1. 文章里的例子

查询 q = (√2, 0)；三个键 k₁ = (ln 2, 0)、k₂ = (0, 1)、k₃ = (0, −1)；三个值 v₁ = (0, 0)、v₂ = (4, 0)、
v₃ = (0, 4)。`qkv.attend` 直接收这些数（可以写 `sqrt(2)`、`ln(2)` 这样的式子，向量之间用分号隔开），
返回一个“推导”对象，在笔记本里显示成逐步的计算。
""",
        """
## 1. The article's example

Query q = (√2, 0); keys k₁ = (ln 2, 0), k₂ = (0, 1), k₃ = (0, −1); values v₁ = (0, 0), v₂ = (4, 0),
v₃ = (0, 4). `qkv.attend` takes these numbers as written (expressions such as `sqrt(2)` and `ln(2)`
are fine, vectors separated by semicolons) and returns a derivation, which a notebook shows step by step.
""",
    ),
    ("code", 'd = qkv.attend("sqrt(2),0", "ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4")\nd'),
    (
        "md",
        """
推导里的每个数都可以取出来用。权重 a 都不小于 0，加起来正好是 1，所以 z 是三个值的凸组合；
`d.hull` 用线性规划检查 z 是否真的落在三个值围成的三角形里，并找出组合它所需的权重。
""",
        """
Every number of the derivation can be taken out and used. The weights a are all non-negative and sum
to exactly 1, so z is a convex combination of the three values; `d.hull` checks with a linear program
that z really lies in the triangle the values span, and finds the weights that make it.
""",
    ),
    ("code", 'print("a =", d.weights, "  sum =", d.weights.sum())\nprint("z =", d.z)\nprint(d.hull)'),
    (
        "md",
        """
画成图：阴影是三个值张成的凸包（这里是一个三角形），z 落在里面；线越粗，对应的权重越大。
""",
        """
As a picture: the shaded region is the hull of the three values (here a triangle), and z lies
inside it; the thicker a line, the larger that value's weight.
""",
    ),
    (
        "code",
        """
import tempfile
from pathlib import Path

from IPython.display import Image

out = Path(tempfile.mkdtemp())
d.figure(out / "hull.png")
Image(filename=str(out / "hull.png"), width=420)
""",
    ),
    (
        "md",
        """
## 2. 改一个数

把 k₁ 拉长一倍，变成 (2 ln 2, 0)。q 和它的点积变大，softmax 之后 v₁ = (0, 0) 分到的权重从 1/2
涨到 2/3，z 就被拉向原点，变成 (2/3, 2/3)。键决定“听谁的”，但不管键怎么改，权重始终非负、和为 1，
z 永远跑不出这个三角形。不妨自己再改几个数试试。
""",
        """
## 2. Change one number

Stretch k₁ to twice its length, (2 ln 2, 0). Its dot product with q grows, after softmax v₁ = (0, 0)
gets 2/3 of the weight instead of 1/2, and z is pulled towards the origin, to (2/3, 2/3). The keys
decide whom to listen to, but however you change them the weights stay non-negative and sum to 1, so
z never leaves the triangle. Try a few numbers of your own.
""",
    ),
    (
        "code",
        """
d2 = qkv.attend("sqrt(2),0", "2*ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4")
print("a =", d2.weights)
print("z =", d2.z, d2.hull.inside)
""",
    ),
    (
        "md",
        """
## 3. 在训练好的模型里

qkv 自带一个小模型：4 层，每层 4 个头，在内置的中文语料上训练过。`qkv.load()` 不带参数就打开它。
句子是「我 投资了 苹果 ，」：最后那个逗号在某一个头里几乎只看「投资了」。这个头不是我们挑的，
而是 `convex` 这一课在所有头里量出来的：它找对提示词权重最大的那个头，再检查凸包的结论。
""",
        """
## 3. Inside a trained model

qkv ships a small model: 4 layers of 4 heads, trained on its built-in Chinese corpus. `qkv.load()`
with no argument opens it. The sentence is 「我 投资了 苹果 ，」 ("I invested in apple,"): in one head
the final comma looks almost only at 「投资了」 ("invested in"). We did not pick that head by hand:
the lesson `convex` measures every head, takes the one that weighs the cue most, and checks the hull
claim on it.
""",
    ),
    (
        "code",
        """
model, tokenizer = qkv.load()
lesson = qkv.lessons.run("convex")
text, L, h = lesson.measured.text, lesson.measured.layer, lesson.measured.head
print(lesson.headline)
print(text, L, h)
""",
    ),
    (
        "md",
        """
`qkv.explain` 把这个头在最后一个位置上的计算写出来：点积、除以 √d_head、softmax、按权重求和。
和上面的手算是同一套步骤，只是向量从 2 维变成了 32 维。
""",
        """
`qkv.explain` writes out this head's computation at the last position: dot products, division by
√d_head, softmax, the weighted sum. The same steps as the hand computation above, with vectors of 32
dimensions instead of 2.
""",
    ),
    ("code", "qkv.explain(model, tokenizer, text, layer=L, head=h)"),
    (
        "md",
        """
## 4. 自己从 trace 里核对

`run_with_trace` 记下前向计算的每一个中间量，名字沿用 TransformerLens 的钩子名（`trace["pattern", L]`
是层 L 的注意力权重 A）。取出这个头的 A 和 v，自己算 z = Σ A_j v_j，再和模型记下的 z 比较。
`qkv.check` 则把所有层、所有头的不变量都查一遍：每行权重和为 1、z 在值的凸包里，等等。
""",
        """
## 4. Check it yourself against the trace

`run_with_trace` records every intermediate of the forward pass under TransformerLens's hook names
(`trace["pattern", L]` is layer L's attention weights A). Take this head's A and v, compute
z = Σ A_j v_j yourself and compare it with the z the model recorded. `qkv.check` then checks the
invariants of every layer and head: each row of weights sums to 1, z lies in the values' hull, and more.
""",
    ),
    (
        "code",
        """
import torch

ids = torch.tensor([tokenizer.encode(text)])
logits, trace = model.run_with_trace(ids)
A = trace["pattern", L][0, h, -1]
v = trace["v", L][0, :, h]
z = A @ v
print("A =", A.numpy().round(3))
print("max |A v - z| =", (z - trace["z", L][0, -1, h]).abs().max().item())
qkv.check(trace)
""",
    ),
    (
        "md",
        """
## 5. 在页面里看

`qkv.show` 把 qkv 的探索页面直接嵌进笔记本：数据都在页面里，不用启动服务器，也不联网。
它打开在上面量出来的那个头和最后一个词元上。点别的词元、换层和头，热图和逐步计算都会跟着变。
""",
        """
## 5. See it on the page

`qkv.show` puts qkv's explorer page right into the notebook: the data is inside the page, with no
server and no network. It opens on the head measured above and on the last token. Click another
token, change the layer or the head, and the heatmap and the step-by-step computation follow.
""",
    ),
    ("code", "qkv.show(model, tokenizer, text, layer=L, head=h, token=-1)"),
]
