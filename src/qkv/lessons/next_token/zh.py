"""Lesson "next-token": next-token probabilities and temperature (Chinese)."""

MESSAGES = {
    "title": "下一个词元的概率：softmax(h·W_out + b) 与温度",
    "headline": "「{prompt}」之后：{top}；熵 {entropies}；{greedy_at}",
    "entropy_at": "T={T:g}：{H:.2f} 比特",
    "greedy_same": "贪心选择在每个温度下都是 {greedy}",
    "greedy_differs": "贪心选择 {picks}",
    "temperature": "  T = {T:g}: {top}；熵 {H:.3f} 比特",
    "rising": "温度越高，熵越大，分布越平；温度越低，概率越集中到第一名。",
    "not_rising": "这次熵没有随温度单调增加。",
    "same": "除以一个正数不改变 logit 的大小顺序，所以贪心解码（取概率最大者）在三种温度下都选「{greedy}」；"
    "温度只影响随机采样。",
    "changed": "贪心选择随温度变了，这不应发生。",
    "text": "经过所有层之后，最后一个位置的隐藏向量 h 乘上 W_out、加上偏置 b，得到词表里每个词元一个分数（logit），"
    "softmax 再把这些分数变成概率。句子「{prompt}」之后（最后一个词元是「{last}」），概率最高的 {k} 个：\n"
    "  名次  词元  概率\n{rows}\n"
    "这 {k} 个合计 {top_sum:.4f}；整个分布的熵是 {entropy_bits:.3f} 比特"
    "（{max_entropy_bits:.2f} 比特意味着在全部词元上平均分配）。\n\n"
    "生成时可以先把 logit 除以温度 T 再做 softmax：\n{temps}\n{verdict}",
    "bar": "T = {T:g}（熵 {H:.2f} 比特）",
    "y": "下一个词元的概率",
    "fig_title": "三种温度下概率最高的 {k} 个词元",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": "它把最后一个位置的向量变成下一个词元的概率，而编码器没有这样的输出头",
}
