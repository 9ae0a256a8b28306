"""网页上的干预面板（qkv.apps.web.routes_interventions）：拒绝的理由（中文，与 en/web_interventions.py 同键）。"""

MESSAGES = {
    "patch_work": (
        "在这里修补 {site} 要把 {pieces} 处、每处 {T} 个词元送进一个 {params:,} 个参数的模型，"
        "共 {work:,} 个“参数×词元”，超过网页一次请求的上限（{most:,}）：请最多用 {T_max} 个词元，"
        "或在 Python 里用 qkv.analysis.patch"
    ),
    "patch_too_large": (
        "在这里修补 {site} 要把 {pieces} 处送进一个 {params:,} 个参数的模型，即使只有一个词元也超过网页一次请求的上限"
        "（{most:,} 个“参数×词元”）：请在 Python 里用 qkv.analysis.patch"
    ),
}
