"""Lesson "residual": residual connections and LayerNorm in a deep stack (Chinese)."""

MESSAGES = {
    "title": "残差连接与 LayerNorm：深层网络为什么训练得动",
    "label_both": "残差 + LayerNorm",
    "label_residual": "只有残差",
    "label_norm": "只有 LayerNorm",
    "label_neither": "两者都没有",
    "headline": "{n_layers} 层、{steps} 步后：{parts}（只按词频猜：{unigram_loss:.2f}）",
    "headline_part": "{label} 验证损失 {val:.2f}",
    "row": "- {label}：第 {early_step} 步 {early:.2f}，最终训练损失 {train:.2f}、验证损失 {val:.2f}。初始化时："
    "最后一块输出的均方根 {rms}，不同词元的输出向量平均余弦相似度 {cos:.3f}，"
    "第一块 / 最后一块的梯度范数 {grad_first} / {grad_last}",
    "best": "验证损失最低的是「{label}」（{val:.2f}）。",
    "stuck": "「{label}」到最后也没有比只按词频猜（{unigram_loss:.2f}）好多少：{why}。",
    "collapsed": "所有位置走出最后一块时几乎指向同一个方向（余弦 {cos:.3f}）：没有直通路径，注意力一遍遍把各个词元"
    "平均到一起，区分词元的信息被抹掉了，输出不再依赖输入",
    "collapsed_big_grad": "{collapsed}（梯度本身并不小：第一块的梯度是 {grad}）",
    "collapsed_again": "同样，各位置的向量塌缩到同一个方向（余弦 {cos:.3f}）",
    "vanished": "传到第一块的梯度只有 {grad}，底层根本学不动",
    "no_cause": "初始化时的数字看不出明显的原因",
    "above": "高",
    "below": "低",
    "layernorm_helps": "只有残差的模型能学，但比加上 LayerNorm 的模型{direction} {gap:.2f} nat，"
    "第 {early_step} 步时是 {early_loss_residual:.2f} 对 {early_loss_both:.2f}。"
    "初始化时它的梯度是完整模型的 1/{grad_ratio_residual:.0f}：没有 LayerNorm 把向量拉回单位尺度，"
    "输出层看到的向量很小，起步就慢。",
    "text": "一个 Transformer 块不是把 x 换成 f(x)，而是在 x 上加一个修正：x ← x + f(LN(x))。"
    "这条“直通”的加法有两个作用：前向时，输入原样传到后面，每一层只需学会“还差什么”；反向时，"
    "梯度也能沿着这条路直达底层，不必穿过每一层的矩阵。LayerNorm 则把每个词元的向量拉回均值 0、"
    "方差 1（再乘上可学习的缩放），让每一层看到的输入尺度稳定。\n\n"
    "实验：四个 {n_layers} 层、d_model = {d_model} 的模型，同一个种子、同一份内置中文语料"
    "（{tokens:,} 个词元）、同样的 {steps} 个批次，只在有没有残差、有没有 LayerNorm 上不同。"
    "参照线：完全不看上下文、只按词频猜的一元模型，验证损失 {unigram_loss:.2f}"
    "（在 {vocab} 个词里均匀乱猜是 {uniform_loss:.2f}）。初始化时的数字用 float64 在第一个批次上计算。\n"
    "{rows}\n\n"
    "{verdicts}",
    "unigram": "只按词频猜（一元模型）",
    "fig_title": "{n_layers} 层，d_model = {d_model}：同样的数据、种子和步数",
}
