"""页面记在地址里、可以导出的视图（qkv.apps.web.export，POST /api/export）：
拒绝时说的话，中文（键与 en/address.py 相同）。"""

MESSAGES = {
    "part": "这个模型的 part 只能是 {parts} 之一，收到的是 {got}",
    "no_part": "part 用来选翻译模型的某一种注意力；这个模型只有一种，不用写它（收到的是 {got}）",
    "panel": "panel 只能是 {panels} 之一，收到的是 {got}",
    "inputs": "各面板的输入合起来最多 {n} 项，每项最多 {chars} 个字符；收到的是 {got}",
}
