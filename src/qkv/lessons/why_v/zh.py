"""Lesson "why-v": z = A·V against z = A·K, trained side by side (Chinese)."""

MESSAGES = {
    "title": "为什么要乘 V：K 负责匹配，V 负责传递（z = A·V 与 z = A·K 的对比实验）",
    "headline": "d_head {width}：验证损失 A·V {val_v:.3f} / A·K {val_k:.3f}，"
    "远距离关联 {association_v:.0%} / {association_k:.0%}，语序 {order_v:.0%} / {order_k:.0%}",
    "row": "- d_head {width}，{kind}：训练损失 {train:.3f}，验证损失 {val:.3f}；词义 {sense:.0%}，"
    "远距离关联 {association:.0%}，语序 {order:.0%}；参数 {params:,} 个",
    "pair": "d_head = {width}：A·K 的验证损失比 A·V {direction} {gap:.3f} nat"
    "（第 {early_from}–{early_to} 步的批次损失差 {early:+.3f}），三组探针平均准确率 {acc_v:.0%}（A·V）"
    "对 {acc_k:.0%}（A·K）。",
    "higher": "高",
    "lower": "低",
    "better": "分开 W_V 的模型在这个预算下更好。",
    "worse": "这一组里只用 K 的模型反而更好。",
    "close": "两者在这个预算下差别不大。",
    "verdict": "{pair}{conclusion}",
    "text": "注意力里其实有两道工序。第一道决定“听谁的”：当前词元的查询 q_i 与每个键 k_j 做点积，"
    "softmax 把分数变成权重 a_ij。第二道决定“拿到什么”：z_i = Σ_j a_ij v_j。"
    "标准做法给同一个词元准备两种投影：k_j = x_j W_K 用来被找到，v_j = x_j W_V 用来交出内容。"
    '如果去掉 W_V、直接混合键（values="k"，z_i = Σ_j a_ij k_j），那么一个词元凭什么被匹配上，'
    "它就只能交出什么。\n\n"
    "实验训练两对模型。每一对形状相同（{n_layers} 层、{n_heads} 个头、d_model = {d_model}），"
    "用同一个随机种子初始化，在同一份内置中文语料（{sentences} 句，{tokens:,} 个词元）上"
    "看到完全相同的 {steps} 个批次（每批 {batch_size} 段），唯一的区别是混合 V 还是混合 K。"
    "第一对的头宽是常见的 d_head = {wide}；第二对把每个头压窄到 d_head = {narrow}，"
    "这时一个键几乎没有多余的维度，既要负责被找到、又要携带内容，矛盾就显出来了。"
    "探针是训练时没出现过的句子（词义 {sense_probes} 条、远距离关联 {association_probes} 条、"
    "语序 {order_probes} 条），模型给正确续写的概率最高才算答对"
    "（随机猜的准确率分别是 {sense_chance:.0%}、{association_chance:.0%}、{order_chance:.0%}）：\n"
    "{rows}\n\n"
    "{verdicts}\n\n"
    "怎么理解：只用 K 时，每个头的“被匹配的特征”和“被传递的内容”必须落在同一组方向里。"
    "头宽时，键里还有空间把两类特征放在不同方向上，后面的 W_O 和 MLP 可以从中挑出要用的部分；头很窄时就只能顾此失彼。"
    "给 V 单独一个矩阵，等于让“我为什么相关”和“我能提供什么”各自学习，互不牵制。"
    "图中是四个模型的损失曲线，可以看到差距在训练中是缩小还是保持。",
    "k_label": "z = A·K（无 W_V）",
    "width_title": "每个头宽 d_head = {width}",
    "fig_title": "同样的形状、同样的批次：混合值向量 v = x W_V，还是直接混合键 k = x W_K",
}
