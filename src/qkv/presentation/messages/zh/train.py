"""训练进行中说的话（qkv.core.train.loop）：进度条旁的数字，以及每次评估写的一行（与 en/train.py 同键）。"""

MESSAGES = {
    "unit": "步",
    "progress": "损失 {loss}{val}，每秒 {rate} 个词元",
    "progress_val": "，验证 {val_loss}",
    "evaluated": "已训练 {step} 步：训练损失 {train_loss}{val}",
    "evaluated_val": "，验证损失 {val_loss}",
}
