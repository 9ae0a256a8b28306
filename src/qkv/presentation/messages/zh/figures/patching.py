"""激活修补的热图（qkv figure patching）（中文）。"""

MESSAGES = {
    "title": "在 {site} 上做激活修补：每一处干净激活能找回多少",
    "layer": "层 {layer}",
    "head": "头 {head}",
    "positions": "位置（干净词元/损坏词元）",
    "heads": "头（所有位置一起换）",
    "whole": "整层",
    "whole_label": "每层的整个激活（所有位置一起换）",
    "share": "(修补后 - 损坏) / (干净 - 损坏)",
    "share_colours": "蓝：向干净运行靠近，红：远离干净运行",
    "difference": "修补后 - 损坏",
    "difference_colours": "蓝：变大，红：变小",
    "metric": "指标：位置 {pos} 上的 logit({answer}) - logit({wrong})；",
    "gap_small": "两次运行几乎没有差别：这些比例并不可靠",
    "runs": "干净运行 {clean}，损坏运行 {corrupted}",
}
