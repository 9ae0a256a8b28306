"""The report of all lessons (qkv demo: index.html, report.md) (Chinese)."""

MESSAGES = {
    "title": "qkv 课程",
    "intro": "每一节都是刚刚运行的实验，其中的每个数字都是实测得到的。",
}
