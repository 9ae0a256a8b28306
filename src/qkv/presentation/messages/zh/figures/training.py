"""Loss curves of training runs (qkv figure loss) (Chinese)."""

MESSAGES = {
    "batch": "{run}：批次损失",
    "batch_mean": "{run}：批次损失（{window} 步平均）",
    "train": "{run}：训练集损失（评估）",
    "val": "{run}：验证集损失",
    "step": "训练步数",
    "loss": "交叉熵损失（nat）",
    "title": "训练损失曲线",
}
