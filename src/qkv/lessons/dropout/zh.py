"""Lesson "dropout": attention dropout in training and evaluation mode (Chinese)."""

MESSAGES = {
    "title": "注意力 dropout：训练时权重和不再是 1，z 会离开凸包",
    "headline": "训练模式（p = {p}）：和不为 1 的行 {train_rows_failed}/{train_rows_checked}"
    "（最大偏差 {train_rows_worst:.3f}），凸包外的 z {train_hull_failed}/{train_hull_checked}"
    "（最大 L1 距离 {train_hull_worst:.3f}）；评估模式：{eval_rows_failed} 和 {eval_hull_failed}",
    "text": "训练时常在注意力权重上加 dropout：每个权重以概率 p = {p} 被置为 0，剩下的乘以 1/(1 − p)。"
    "这样做保证了权重的期望不变，却不会把每一行重新归一化。于是某一次前向计算里，一行权重的和可能小于 1 也可能大于 1"
    "（这次量到的行和在 {train_rows_min_sum:.3f} 到 {train_rows_max_sum:.3f} 之间），z = Σ a_j v_j 不再是凸组合，"
    "也就不再被关在 Value 的凸包里。\n\n"
    "我们让同一套权重（内置模型）在句子「{text}」（{tokens} 个词元）上跑两遍，用 qkv.check 逐行检查、"
    "并对每个头每个位置解一次线性规划：\n"
    "- 训练模式：{train_rows_checked} 行里有 {train_rows_failed} 行的和不是 1"
    "（最大偏差 {train_rows_worst:.3f}）；{train_hull_checked} 个 z 里有 {train_hull_failed} 个"
    "在凸包外（最大 L1 距离 {train_hull_worst:.3f}）。\n"
    "- 评估模式：和不是 1 的行 {eval_rows_failed} 个，凸包外的 z {eval_hull_failed} 个。\n\n"
    "所以“z 在凸包内”这条性质只在推理（评估模式）时严格成立；训练时只有权重的期望还满足“和为 1”。",
    "eval_mode": "评估模式",
    "train_mode": "训练模式，dropout p = {p}",
    "key": "键",
    "fig_title": "层 {layer} 头 {head}：左侧标出每一行的和 Σ",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": "它要把模型重建成 qkv 的 GPT，才能打开注意力 dropout",
}
