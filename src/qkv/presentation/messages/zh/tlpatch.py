"""激活修补的指标，按 TransformerLens 用户的写法（qkv.analysis.patch）：拒绝的理由（中文）。"""

MESSAGES = {
    "metric_type": (
        "指标必须是一个以 logits 为输入、对每次修补后的运行给出一个数的函数，例如 logit_diff(answer_id, wrong_id)，"
        "或 TransformerLens 里常写的 lambda logits: logits[0, -1, a] - logits[0, -1, b]；收到的是 {got}"
    ),
    "metric_shape": (
        "指标必须对每次修补后的运行给出一个数：要么对传给它的整批 logits 只给一个数（这时每次运行单独调用它一次，"
        "和 TransformerLens 的调用方式一样），要么每行给一个（一批 {B} 行就给 {B} 个）；实际得到 {got} 个"
    ),
    "metric_value": "指标必须给出一个数（浮点数，或只含一个数的张量）；收到的是 {got}",
}
