"""训练进行中说的话（qkv.core.train.loop）：进度条旁的数字，以及每次评估写的一行（与 en/train.py 同键）。"""

MESSAGES = {
    "unit": "步",
    "progress": "损失 {loss}{val}，每秒 {rate} 个词元",
    "progress_val": "，验证 {val_loss}",
    "evaluated": "已训练 {step} 步：训练损失 {train_loss}{val}",
    "evaluated_val": "，验证损失 {val_loss}",
    # 训练时拒绝的情况（qkv.core.train）：任务训练用的数据，以及这次训练做不到的事
    "data_text": "文本",
    "data_pairs": "句对集",
    "data_differs": "这份{what}与 {out} 训练时用的不同；续训请用同一份{what}",
    "task_lm": "不带 --task translate 的 qkv train",
    "task_translate": "qkv train --task translate",
    "trained_by": "请用 {command} 训练它",
    "not_trained": "qkv 能加载它，但不训练它",
    "arch_task": "{task} 训练的是{family}（arch={arch}）；给的却是 arch={got}，{got_family}：{how}",
    "vocab_too_small": (
        "词表太小，装不下这段文本（只保留了 {n} 个词元；{unknown}）：请给更大的 vocab_size，或者不给，保留所有的词"
    ),
    "count_pairs": "个句对",
    "count_val_pairs": "个验证句对",
    "pairs_count": "{out} 训练时用了 {was} {what}，现在是 {now}：续训请用同样的句对和 val_fraction",
}
