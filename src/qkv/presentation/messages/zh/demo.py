"""`qkv demo` 在训练、采样、运行课程时打印的话（qkv.apps.demo），与 en/demo.py 同键。"""

MESSAGES = {
    "bundled": "使用自带的模型（{ckpt}）。",
    "training": "正在用内置语料训练一个小 GPT（中文和英文，按词切分，与自带的模型相同）……",
    "trained": "训练了 {steps} 步，验证损失 {val_loss}（用时 {seconds} 秒，每秒 {rate} 个词元）；检查点在 {ckpt}",
    "samples": "采样（温度 0.5）：同一个词「苹果」，在「吃了」和「投资了」之后接下去的话不一样",
    "lessons": "正在运行全部课程（语言：{language}）；图和报告写到 {report}",
    "report": "报告：{index}（旁边还有 report.md）",
    "serve": "在浏览器里看这个模型的注意力：{serve}（然后打开 http://127.0.0.1:8000/）",
}
