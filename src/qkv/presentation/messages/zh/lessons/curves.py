"""The loss curves of the lessons that train their own models (Chinese)."""

MESSAGES = {
    "x": "训练步数",
    "y": "损失（nat）；方块：最终验证集损失",
}
