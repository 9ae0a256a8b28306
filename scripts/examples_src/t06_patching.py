"""Notebook 06: activation patching on the bundled model (qkv.patch_text / qkv.patch)."""

CELLS = [
    (
        "md",
        """
# 激活修补：哪一部分带着“水果”还是“公司”

第二个笔记本看到：逗号之后，吃过的苹果接「味道」，投资的苹果接「股价」。但这个差别是由哪一层、哪个头
带过来的？激活修补的做法是：运行“损坏”的句子（投资），只把某一处激活换成“干净”句子（吃）那次运行里的值，
让后面的计算照常进行，再看答案往回走了多少。

指标是 logit(味道) − logit(股价)：干净句子里是一个大的正数，损坏句子里是负数。修补某一处之后它往干净的
数值走了多少，就说明那一处带着多少差别；`normalized` 把它写成比例，0 是毫无作用，1 是完全恢复。

层、头和位置都从 0 开始数。
""",
        """
# Activation patching: which part carries "fruit" or "company"

The second notebook saw that after the comma the eaten apple leads to 「味道」 (taste) and the invested
one to 「股价」 (share price). But which layer, which head carries that difference? Activation
patching runs the "corrupted" sentence (invested), puts in at a single place the value that
activation had in the "clean" sentence's run (ate), lets the rest of the computation go on, and
sees how far the answer moves back.

The metric is logit(味道) − logit(股价): a large positive number for the clean sentence, a negative
one for the corrupted. How far patching one piece moves it towards the clean value says how much of
the difference that piece carries; `normalized` gives it as a share, 0 for nothing and 1 for all of it.

Layers, heads and positions count from 0.
""",
    ),
    (
        "code",
        """
import tempfile
from pathlib import Path

from IPython.display import Image

import qkv
from qkv.presentation.patching_table import render
from qkv.presentation.plot_patching import patching_heatmap

qkv.set_lang("__LANG__")
model, tokenizer = qkv.load()
clean, corrupted = "我 吃了 苹果 ，", "我 投资了 苹果 ，"
""",
    ),
    (
        "md",
        """
## 1. 残差流，逐层逐位置

`site="resid_pre"`：在层 L 入口、某一个位置上，换入干净运行的残差流。两句话长度相同（4 个词元），
只有位置 1 的动词不同。
""",
        """
## 1. The residual stream, layer by layer and position by position

`site="resid_pre"`: at the input of layer L, at one position, put in the clean run's residual stream.
Both sentences have the same length (4 tokens) and differ only in the verb at position 1.
""",
    ),
    (
        "code",
        """
r = qkv.patch_text(model, tokenizer, clean, corrupted, "味道", "股价", site="resid_pre")
print(render(r.to_json(tokenizer)))
out = Path(tempfile.mkdtemp())
patching_heatmap(r.to_json(tokenizer), out / "resid.png")
Image(filename=str(out / "resid.png"), width=520)
""",
    ),
    (
        "md",
        """
在层 0、1、2 的入口换掉位置 1 的动词，答案几乎完全回来：差别全在这个动词上。到了层 3 的入口，
起作用的位置变成了最后的逗号：是层 2 把动词带来的信息搬到了逗号上。在位置之间搬运信息的，正是注意力。
""",
        """
Swapping the verb at position 1 at the input of layers 0, 1 or 2 brings the answer nearly all the
way back: the whole difference is in that verb. At the input of layer 3 the position that matters is
the final comma instead: layer 2 moved what the verb brought over to the comma. What moves
information between positions is attention.
""",
    ),
    (
        "md",
        """
## 2. 一个一个头

`site="z"`：换入某一层某一个头的输出 z（所有位置一起）。再用 `whole=True` 把一整层的注意力一起换。
""",
        """
## 2. Head by head

`site="z"`: put in one head's output z (at every position at once). Then `whole=True` puts in a whole
layer's attention at once.
""",
    ),
    (
        "code",
        """
heads = qkv.patch_text(model, tokenizer, clean, corrupted, "味道", "股价", site="z")
print(render(heads.to_json(tokenizer)))
layers = qkv.patch_text(model, tokenizer, clean, corrupted, "味道", "股价", site="z", whole=True)
print(layers.normalized.numpy().round(2))
(L, h, value), *_ = heads.strongest(1)
print(L, h)
""",
    ),
    (
        "md",
        """
没有哪一个头单独带着全部差别：层 2 的几个头各自只恢复一部分，把这一层的注意力整个换掉，
恢复得比任何单个头都多得多。“一个头负责一个意思”的说法太简单了，这种事要量过才知道。

同样的 API 也能做别的修补实验：`qkv.patch(model, clean_ids, corrupted_ids, site, metric)`
接受任意两段等长的词元和任意指标函数；`qkv lesson context` 用它找出携带词义的头，
`qkv lesson llm-ioi-lens` 在 SmolLM2 上用它研究间接宾语识别（IOI）。
""",
        """
No single head carries the whole difference: layer 2's heads each recover only a part, and putting
in that layer's whole attention recovers far more than any single head. "One head, one meaning" is
too simple; this is the kind of thing one has to measure.

The same API does other patching experiments: `qkv.patch(model, clean_ids, corrupted_ids, site,
metric)` takes any two token sequences of equal length and any metric function; `qkv lesson
context` uses it to find the heads that carry the sense, and `qkv lesson llm-ioi-lens` to study
indirect-object identification (IOI) on SmolLM2.
""",
    ),
    (
        "md",
        """
## 3. 在页面里看

页面打开在最强的那个头上，句子是干净的那一句，查询是最后的逗号。
""",
        """
## 3. See it on the page

The page opens on the strongest head, with the clean sentence and the final comma as the query.
""",
    ),
    ("code", "qkv.show(model, tokenizer, clean, layer=L, head=h, token=-1)"),
]
