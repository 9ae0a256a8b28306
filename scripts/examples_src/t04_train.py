"""Notebook 04: train a tiny model on a few lines typed in the cell, then look inside it."""

CELLS = [
    (
        "md",
        """
# 用你自己的文字训练一个小模型

第一篇文章最后强调：公式在随机参数下也能算出 z，但 z 有没有用，要靠训练来建立。这个笔记本在几秒钟里
训练一个很小的模型，文字就写在下面的单元格里，换成你自己的也行。然后看它学会了什么、注意力在看哪里。

层、头和位置都从 0 开始数。
""",
        """
# Train a tiny model on your own text

The first article ends on this point: the formulas compute a z even with random weights, but whether
z is of any use is something training has to build. This notebook trains a very small model in a few
seconds, on text typed into the cell below (put your own there). Then we look at what it learned and
where its attention looks.

Layers, heads and positions count from 0.
""",
    ),
    (
        "code",
        """
import tempfile
from pathlib import Path

import qkv

qkv.set_lang("__LANG__")

lines = \"\"\"
小猫 喜欢 吃 鱼 。
小狗 喜欢 啃 骨头 。
小猫 在 窗台 上 睡觉 。
小狗 在 门口 等 主人 。
the cat likes fish .
the dog likes bones .
\"\"\"
text = lines * 20
""",
    ),
    (
        "md",
        """
## 1. 训练

`qkv.train` 默认按字符切分文字（中文一个字一个词元），`preset="tiny"` 是 2 层、每层 4 个头、d_model = 64
的模型。这么短的文字不需要默认的 2000 步，300 步就够；上下文窗口也缩到 32 个字符。
在命令行里，同样的事是 `qkv train --text 你的文件.txt`。
""",
        """
## 1. Training

`qkv.train` splits text into characters by default (one Chinese character, one token), and
`preset="tiny"` is a model of 2 layers, 4 heads each, d_model = 64. Text this short needs no 2000
steps: 300 are enough, with a context window of 32 characters. On the command line the same is
`qkv train --text your_file.txt`.
""",
    ),
    (
        "code",
        """
out = Path(tempfile.mkdtemp()) / "mine"
result = qkv.train(
    text, out=out, preset="tiny", overrides=["steps=300", "n_ctx=32", "eval_interval=100"], progress=False
)
print(f"train_loss = {result.train_loss:.3f}, val_loss = {result.val_loss:.3f}, {result.seconds:.1f} s")
model, tokenizer = qkv.load(out)
print(tokenizer.vocab_size, model.num_params())
""",
    ),
    (
        "md",
        """
损失从 ln(词表大小)（完全靠猜）降到接近 0：这几行字它几乎背下来了。让它接着「小狗」往下写：
""",
        """
The loss falls from ln(vocabulary size), pure guessing, to near 0: it has all but memorised these
lines. Let it go on from 「小狗」 (the puppy):
""",
    ),
    ("code", 'print(qkv.generate(model, tokenizer, "小狗", 20, temperature=0))'),
    (
        "md",
        """
## 2. 它在看哪里

「小猫 喜欢 」后面该接「吃」，「小狗 喜欢 」后面该接「啃」。两句的最后几个字完全一样（都是「喜欢」加一个空格），
要猜对，最后那个位置得回头看句子开头是猫还是狗——这件事只有注意力能做到。先看它猜得对不对，
再从 trace 里找出最后一个位置对「狗」权重最大的头；`qkv.explain` 不指定头时，列出每一层每个头最关注的词元。
""",
        """
## 2. Where it looks

「小猫 喜欢 」 ("the kitten likes ") should go on with 「吃」 (eat), 「小狗 喜欢 」 ("the puppy likes ")
with 「啃」 (gnaw). The two prompts end in the very same characters (「喜欢」 and a space), so to guess
right the last position has to look back at whether the sentence began with a cat or a dog, and only
attention can do that. First, does it guess right? Then we find in the trace the head in which the
last position weighs 「狗」 (dog) most; `qkv.explain` with no head lists, for every layer and head,
the token it looks at most.
""",
    ),
    (
        "code",
        """
import torch

for prompt in ("小猫 喜欢 ", "小狗 喜欢 "):
    p = model.run_with_trace(torch.tensor([tokenizer.encode(prompt)]))[0][0, -1].softmax(-1)
    v, i = p.topk(2)
    print(repr(prompt), [(tokenizer.display(j), round(x, 3)) for x, j in zip(v.tolist(), i.tolist())])

ids = tokenizer.encode(prompt)
_, trace = model.run_with_trace(torch.tensor([ids]))
dog = ids.index(tokenizer.encode("狗")[0])
weights = torch.stack([trace["pattern", L][0, :, -1, dog] for L in range(model.cfg.n_layers)])
L, h = divmod(int(weights.argmax()), model.cfg.n_heads)
print(weights.numpy().round(2))
print(L, h)
qkv.explain(model, tokenizer, prompt)
""",
    ),
    (
        "md",
        """
## 3. 在页面里看

页面打开在这个头上，句子是「小狗 喜欢 」。试着在头和层之间切换：有的头盯着前一个字，有的头回头找主语。
""",
        """
## 3. See it on the page

The page opens on that head, on 「小狗 喜欢 」. Switch between heads and layers: some heads watch
the previous character, some look back for the subject.
""",
    ),
    ("code", "qkv.show(model, tokenizer, prompt, layer=L, head=h, token=-1)"),
]
