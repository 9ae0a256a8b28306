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
}
