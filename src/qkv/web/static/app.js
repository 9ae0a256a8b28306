"use strict";
// qkv explorer: the browser side. One "view" document (qkv.explain.view) holds every number the
// page shows; the arrays are decoded once into typed arrays, and a change of layer, head or query
// token only redraws from them. No framework, no network beyond the same-origin JSON API.

// ---------------------------------------------------------------------------------------------
// Text in two languages. Values may hold simple HTML (our own strings only); {name} is filled in.
// ---------------------------------------------------------------------------------------------

const I18N = {
  en: {
    lang_button: "中文", lang_title: "Switch the page to Chinese",
    model_line: "{L} layers · {H} heads · d_model {dm} · d_head {dh} · n_ctx {nctx} · {tok} tokenizer · {params} parameters · {norm}",
    tok_char: "character", tok_word: "word", tok_bpe: "BPE",
    norm_pre: "pre-norm", norm_post: "post-norm", norm_none: "no LayerNorm",
    text_label: "Text", text_placeholder: "a sentence the model knows", analyze: "Analyze",
    hint_word: "Words are separated by spaces; each space is a token too (shown as ␣). Text typed without spaces is cut into words the model knows, longest first. Enter analyses, Shift+Enter types a newline.",
    hint_char: "Every character is one token. Enter analyses, Shift+Enter types a newline.",
    hint_bpe: "The text is split into byte-pair (BPE) tokens. Enter analyses, Shift+Enter types a newline.",
    examples: "Examples", tokens_label: "Tokens: click one (or press ← →) to choose the query",
    token_title: "position {i}, id {id}",
    static_note: "Static snapshot: run <code>qkv serve</code> to analyse new text.",
    net_error: "Cannot reach the qkv server: {msg}",
    bad_number: "“{name}” must be a number (or empty where allowed).",
    layer: "Layer", head: "Head",
    heads_caption: "Every head's pattern: rows are layers, columns heads. Click one to open it.",
    thumb_title: "layer {l}, head {h}",
    heatmap_title: "Attention pattern A (layer {l}, head {h})",
    heatmap_caption: "Row i is a query, column j a key; darker = larger weight A<sub>ij</sub> = softmax<sub>j</sub>(q<sub>i</sub>·k<sub>j</sub>/√d<sub>head</sub>). Every row adds up to 1. Hover for a weight, click a row to choose that query.",
    heatmap_masked: " Grey cells are the future: the causal mask gives them score −∞, so weight 0.",
    tip_cell: "query {i} “{q}” → key {j} “{k}”<br>A = {a}", tip_masked: "query {i} “{q}” → key {j} “{k}”<br>masked: the future",
    lines_title: "Who looks at whom",
    lines_caption: "Queries on the left, keys on the right. Each line's opacity and width follow A<sub>ij</sub>; the chosen query's lines are drawn strongly, with its weights beside the keys. Click a query to choose it.",
    steps_title: "Step by step: query {i} “{tok}”, layer {l}, head {h}",
    mask_causal: "Causal mask: keys after position {i} get score −∞ and weight 0, so only keys 0…{i} are listed.",
    mask_none: "No mask: the query sees all {T} keys.",
    step1: "<b>Scores.</b> For every visible key j: s<sub>j</sub> = q·k<sub>j</sub> / √d<sub>head</sub>, with √d<sub>head</sub> = √{dh} = {scale}. For “{tok}”, the key with the most weight: s = {dot} / {scale} = {s}.",
    step2: "<b>Exponentiate.</b> Subtract the largest score m = {m}, then e<sub>j</sub> = exp(s<sub>j</sub> − m). Every e<sub>j</sub> ≤ 1, so nothing overflows, and the shift cancels in step 3. Here e = exp({s} − {m}) = {e}; over the {n} keys Σ e<sub>j</sub> = {sum}.",
    step3: "<b>Normalise (softmax).</b> a<sub>j</sub> = e<sub>j</sub> / Σ e. Here a = {e} / {sum} = {a}. All weights are ≥ 0 and add up to {total}.",
    step4: "<b>Weight the values.</b> Each key j brings a value vector v<sub>j</sub> of d<sub>head</sub> = {dh} numbers, multiplied by a<sub>j</sub>. The last column shows the first {k} coordinates of a<sub>j</sub>v<sub>j</sub>; a<sub>j</sub>|v<sub>j</sub>| is its length.",
    step5: "<b>Add them up.</b> z = Σ<sub>j</sub> a<sub>j</sub>v<sub>j</sub> = [{zfirst}{more}], |z| = {znorm} ≤ Σ<sub>j</sub> a<sub>j</sub>|v<sub>j</sub>| = {bound} (triangle inequality: values that point different ways partly cancel).",
    th_token: "key", th_dot: "q·k<sub>j</sub>", th_scaled: "s<sub>j</sub> = q·k<sub>j</sub>/√d", th_shifted: "s<sub>j</sub> − m",
    th_exp: "e<sub>j</sub>", th_weight: "a<sub>j</sub>", th_vnorm: "|v<sub>j</sub>|", th_contrib: "a<sub>j</sub>|v<sub>j</sub>|",
    th_av: "a<sub>j</sub>v<sub>j</sub> (first {k})",
    tt_dot: "raw dot product of the query and key vectors", tt_scaled: "the score: the dot product divided by √d_head",
    tt_weight: "the attention weight, softmax of the scores", tt_contrib: "length of this key's share a_j·v_j",
    hull_title: "Why z lies inside the hull of the values",
    hull_caption: "z = Σ<sub>j</sub> a<sub>j</sub>v<sub>j</sub> with every a<sub>j</sub> ≥ 0 and Σ<sub>j</sub> a<sub>j</sub> = 1: a weighted average of the visible values, so it lies inside their convex hull (shaded). The picture is a linear projection onto two directions along which this head's values spread most (close to its two principal directions), and a linear map keeps weighted averages, so the projected z (✕) stays inside the projected hull. Dot area ∝ a<sub>j</sub>. The picture keeps {kept}% of the values' variance.",
    hull_point: "key {j} “{tok}”: a = {a}", hull_z: "z, the weighted average",
    residual_title: "Residual update at “{tok}”, layer {l}",
    r_x: "the stream entering the block (resid_pre)", r_head_out: "what head {h} writes", r_attn_out: "what all heads write, + b<sub>O</sub>",
    r_x_plus_attn: "the sum", r_resid_mid: "the MLP's input (resid_mid)", r_resid_mid_post: "LayerNorm of the sum (resid_mid)",
    r_mlp_out: "what the MLP writes", r_resid_post: "the stream leaving the block (resid_post)",
    res_pre: "Attention does not replace x, it adds to it: x<sub>new</sub> = x + Σ<sub>h</sub> z<sub>h</sub>W<sub>O</sub>[h] + b<sub>O</sub>. (Pre-norm: the heads read LayerNorm(x), but their output is added to x itself.) The MLP then adds its own update.",
    res_post: "Attention adds to x, then LayerNorm rescales the sum (post-norm): resid_mid = LayerNorm(x + Σ<sub>h</sub> z<sub>h</sub>W<sub>O</sub>[h] + b<sub>O</sub>), and likewise after the MLP.",
    res_none: "Attention adds to x: x<sub>new</sub> = x + Σ<sub>h</sub> z<sub>h</sub>W<sub>O</sub>[h] + b<sub>O</sub> (this model has no LayerNorm).",
    res_off: "This model has no residual connection: the block's output replaces x instead of being added to it.",
    cos_line: "cos(x, attn_out) = {cos}: {hint}.",
    cos_orth: "the update is almost orthogonal to x, so it adds new directions", cos_along: "the update points partly along x",
    cos_against: "the update points partly against x",
    next_title: "Next token after “{tok}” (position {i})",
    next_caption: "The model's ten most likely next tokens here: softmax of the logits after the last layer.",
    next_actual: "Actually follows: “{tok}”, p = {p}, rank {r}.",
    next_last: "This is the last token: nothing follows yet. Generation would sample from these.",
    gen_title: "Generate", temperature: "Temperature", max_new: "New tokens", seed: "Seed", none: "none",
    generate: "Generate", gen_caption: "Samples from softmax(logits / temperature) one token at a time, then analyses the result. Temperature 0 always takes the most likely token; empty top-k / top-p = no cut.",
    gen_added: "Added: “{text}”",
    compare_title: "One word, two contexts", sentence_a: "Sentence A", sentence_b: "Sentence B", word: "Word",
    compare_run: "Compare",
    compare_caption: "Cosine similarity of “{w}”'s residual-stream vector in A and in B. Its input embedding is the same row of W<sub>E</sub> in both sentences, so the cosine is 1 at “embed”. From “L0 in” on the position is added, and each layer's attention mixes in the other tokens of its own sentence, so the two vectors drift apart layer by layer: the same word, read in context.",
    compare_caption_nopos: "Cosine similarity of “{w}”'s residual-stream vector in A and in B. Its input embedding is the same row of W<sub>E</sub> in both sentences, so the cosine is 1 at “embed” (this model adds no position vector: “L0 in” is the same too). Each layer's attention then mixes in the other tokens of its own sentence, so the two vectors drift apart layer by layer: the same word, read in context.",
    compare_none: "No comparison in this snapshot.",
  },
  zh: {
    lang_button: "English", lang_title: "把页面切换成英文",
    model_line: "{L} 层 · 每层 {H} 个头 · d_model {dm} · d_head {dh} · n_ctx {nctx} · {tok}分词 · {params} 个参数 · {norm}",
    tok_char: "字符级", tok_word: "词级", tok_bpe: "BPE ",
    norm_pre: "前置 LayerNorm", norm_post: "后置 LayerNorm", norm_none: "无 LayerNorm",
    text_label: "文本", text_placeholder: "输入一句模型认识的话", analyze: "分析",
    hint_word: "词与词之间用空格分开；每个空格本身也是一个词元（显示为 ␣）。不带空格输入的句子会按模型认识的词切开（优先取最长的词）。按回车键分析，Shift+回车键换行。",
    hint_char: "每个字符是一个词元。按回车键分析，Shift+回车键换行。",
    hint_bpe: "文本按字节对编码（BPE）切成词元。按回车键分析，Shift+回车键换行。",
    examples: "例句", tokens_label: "词元：点击一个（或按 ← →）作为查询",
    token_title: "位置 {i}，编号 {id}",
    static_note: "这是静态快照：运行 <code>qkv serve</code> 才能分析新的文本。",
    net_error: "连接不上 qkv 服务器：{msg}",
    bad_number: "“{name}”必须是数字（允许留空的地方可以留空）。",
    layer: "层", head: "头",
    heads_caption: "所有注意力头的模式：行是层，列是头。点击打开其中一个。",
    thumb_title: "第 {l} 层，第 {h} 个头",
    heatmap_title: "注意力模式 A（第 {l} 层，第 {h} 个头）",
    heatmap_caption: "第 i 行是查询，第 j 列是键；颜色越深，权重越大：A<sub>ij</sub> = softmax<sub>j</sub>(q<sub>i</sub>·k<sub>j</sub>/√d<sub>head</sub>)。每一行的权重加起来等于 1。鼠标悬停可看权重，点击某一行即选中该查询。",
    heatmap_masked: "灰色格子是“未来”：因果遮蔽把它们的分数设为 −∞，权重因此为 0。",
    tip_cell: "查询 {i}「{q}」→ 键 {j}「{k}」<br>A = {a}", tip_masked: "查询 {i}「{q}」→ 键 {j}「{k}」<br>已遮蔽：未来位置",
    lines_title: "谁在看谁",
    lines_caption: "左列是查询，右列是键。连线的不透明度和粗细与 A<sub>ij</sub> 成正比；选中查询的连线画得最醒目，键旁标出它的权重。点击左列可选择查询。",
    steps_title: "逐步计算：查询 {i}「{tok}」，第 {l} 层，第 {h} 个头",
    mask_causal: "因果遮蔽：位置 {i} 之后的键分数为 −∞、权重为 0，所以表中只列出键 0…{i}。",
    mask_none: "没有遮蔽：查询能看到全部 {T} 个键。",
    step1: "<b>打分。</b>对每个可见的键 j：s<sub>j</sub> = q·k<sub>j</sub> / √d<sub>head</sub>，其中 √d<sub>head</sub> = √{dh} = {scale}。以权重最大的键「{tok}」为例：s = {dot} / {scale} = {s}。",
    step2: "<b>取指数。</b>先减去最大的分数 m = {m}，再算 e<sub>j</sub> = exp(s<sub>j</sub> − m)。这样每个 e<sub>j</sub> ≤ 1，不会溢出，而这个平移在第 3 步会被约掉。这里 e = exp({s} − {m}) = {e}；{n} 个键合计 Σ e<sub>j</sub> = {sum}。",
    step3: "<b>归一化（softmax）。</b>a<sub>j</sub> = e<sub>j</sub> / Σ e。这里 a = {e} / {sum} = {a}。所有权重都 ≥ 0，加起来等于 {total}。",
    step4: "<b>给值向量加权。</b>每个键 j 带来一个 d<sub>head</sub> = {dh} 维的值向量 v<sub>j</sub>，乘以 a<sub>j</sub>。最后一列是 a<sub>j</sub>v<sub>j</sub> 的前 {k} 个坐标，a<sub>j</sub>|v<sub>j</sub>| 是它的长度。",
    step5: "<b>求和。</b>z = Σ<sub>j</sub> a<sub>j</sub>v<sub>j</sub> = [{zfirst}{more}]，|z| = {znorm} ≤ Σ<sub>j</sub> a<sub>j</sub>|v<sub>j</sub>| = {bound}（三角不等式：方向不同的值向量会部分抵消）。",
    th_token: "键", th_dot: "q·k<sub>j</sub>", th_scaled: "s<sub>j</sub> = q·k<sub>j</sub>/√d", th_shifted: "s<sub>j</sub> − m",
    th_exp: "e<sub>j</sub>", th_weight: "a<sub>j</sub>", th_vnorm: "|v<sub>j</sub>|", th_contrib: "a<sub>j</sub>|v<sub>j</sub>|",
    th_av: "a<sub>j</sub>v<sub>j</sub>（前 {k} 维）",
    tt_dot: "查询向量与键向量的原始点积", tt_scaled: "分数：点积除以 √d_head",
    tt_weight: "注意力权重：分数的 softmax", tt_contrib: "这个键所贡献的 a_j·v_j 的长度",
    hull_title: "为什么 z 落在值向量的凸包里",
    hull_caption: "z = Σ<sub>j</sub> a<sub>j</sub>v<sub>j</sub>，每个 a<sub>j</sub> ≥ 0 且 Σ<sub>j</sub> a<sub>j</sub> = 1：z 是可见值向量的加权平均，所以落在它们的凸包（阴影部分）里。图中坐标是把值向量线性投影到该头值向量分布最散开的两个方向上（接近两个主方向），而线性映射保持加权平均，所以投影后的 z（✕）仍在投影后的凸包里。圆点面积 ∝ a<sub>j</sub>。这张图保留了值向量 {kept}% 的方差。",
    hull_point: "键 {j}「{tok}」：a = {a}", hull_z: "z：加权平均",
    residual_title: "残差流更新：「{tok}」，第 {l} 层",
    r_x: "进入本块的残差流（resid_pre）", r_head_out: "第 {h} 个头写入的内容", r_attn_out: "所有头写入的内容，加上 b<sub>O</sub>",
    r_x_plus_attn: "两者之和", r_resid_mid: "MLP 的输入（resid_mid）", r_resid_mid_post: "和的 LayerNorm（resid_mid）",
    r_mlp_out: "MLP 写入的内容", r_resid_post: "离开本块的残差流（resid_post）",
    res_pre: "注意力不替换 x，而是加到 x 上：x<sub>new</sub> = x + Σ<sub>h</sub> z<sub>h</sub>W<sub>O</sub>[h] + b<sub>O</sub>。（前置 LayerNorm：各个头读的是 LayerNorm(x)，输出却加回 x 本身。）随后 MLP 再加上它自己的更新。",
    res_post: "注意力先加到 x 上，再由 LayerNorm 重新缩放（后置 LayerNorm）：resid_mid = LayerNorm(x + Σ<sub>h</sub> z<sub>h</sub>W<sub>O</sub>[h] + b<sub>O</sub>)，MLP 之后同样如此。",
    res_none: "注意力加到 x 上：x<sub>new</sub> = x + Σ<sub>h</sub> z<sub>h</sub>W<sub>O</sub>[h] + b<sub>O</sub>（这个模型没有 LayerNorm）。",
    res_off: "这个模型没有残差连接：块的输出直接替换 x，而不是加到 x 上。",
    cos_line: "cos(x, attn_out) = {cos}：{hint}。",
    cos_orth: "更新几乎与 x 正交，带来的是新方向", cos_along: "更新有一部分沿着 x 的方向",
    cos_against: "更新有一部分与 x 方向相反",
    next_title: "「{tok}」之后的下一个词元（位置 {i}）",
    next_caption: "模型在这里最可能接上的十个词元：最后一层之后 logits 的 softmax。",
    next_actual: "实际接在后面的是「{tok}」，p = {p}，排第 {r} 名。",
    next_last: "这是最后一个词元，后面还没有内容；生成时就从这些候选中抽样。",
    gen_title: "生成", temperature: "温度", max_new: "新词元数", seed: "随机种子", none: "无",
    generate: "生成", gen_caption: "每次从 softmax(logits / 温度) 中抽一个词元，接在文本后面，然后分析结果。温度为 0 时总取最可能的词元；top-k、top-p 留空表示不截断。",
    gen_added: "新增：「{text}」",
    compare_title: "同一个词，两种语境", sentence_a: "句子 A", sentence_b: "句子 B", word: "词",
    compare_run: "比较",
    compare_caption: "「{w}」在句子 A 和句子 B 中残差流向量的余弦相似度。它的输入嵌入在两句里是 W<sub>E</sub> 的同一行，所以在 “embed” 处余弦恰为 1。从 “L0 in” 起加上了位置向量，之后每一层的注意力都把本句其他词元的信息混进来，两个向量于是一层层分开：同一个词，在语境中被读出不同的意思。",
    compare_caption_nopos: "「{w}」在句子 A 和句子 B 中残差流向量的余弦相似度。它的输入嵌入在两句里是 W<sub>E</sub> 的同一行，所以在 “embed” 处余弦恰为 1（这个模型不加位置向量，“L0 in” 处也一样）。之后每一层的注意力都把本句其他词元的信息混进来，两个向量于是一层层分开：同一个词，在语境中被读出不同的意思。",
    compare_none: "这个快照里没有比较结果。",
  },
};

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const $ = (sel) => document.querySelector(sel);
// The one number format of the page (tests parse it).
const fmt = (x) => (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(4);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
const num = (x, attrs = "") => `<span class="num"${attrs}>${fmt(x)}</span>`;

/** The string `key` in the current language with {name} replaced by vars[name] (already HTML). */
function t(key, vars) {
  let s = I18N[S.lang][key] ?? I18N.en[key] ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? vars[name] : m));
  return s;
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

const S = {
  lang: "en", mode: "live",
  info: null, examples: [],        // from /api/model
  doc: null, A: null,              // the current view document and its decoded arrays
  T: 0, L: 0, H: 0, k: 0,
  layer: 0, head: 0, token: 0,
  compare: null, added: null, req: 0,
  labelW: 40,                      // widest token label in px (measured once per document)
};
window.qkv = { state: { layer: 0, head: 0, token: 0, lang: "en" }, timings: [], view: null, mode: "live" };

function syncState() {
  Object.assign(window.qkv.state, { layer: S.layer, head: S.head, token: S.token, lang: S.lang });
  window.qkv.mode = S.mode;
}

// ---------------------------------------------------------------------------------------------
// Arrays: base64 little-endian → typed arrays, and row-major offsets into them
// ---------------------------------------------------------------------------------------------

function decode(p) {
  let bytes;
  if (Uint8Array.fromBase64) {
    bytes = Uint8Array.fromBase64(p.data);
  } else {
    const bin = atob(p.data);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  }
  const flat = p.dtype === "int32" ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer);
  return p.layout === "lower" ? expandLower(flat, p.shape) : flat;
}

/** "lower" layout: each T×T matrix sent as its lower triangle, row by row; above it is 0. */
function expandLower(flat, shape) {
  const T = shape[shape.length - 1], n = shape.reduce((a, b) => a * b, 1) / (T * T);
  const out = new flat.constructor(n * T * T);
  let src = 0;
  for (let m = 0; m < n; m++) {
    for (let i = 0; i < T; i++) {
      const row = (m * T + i) * T;
      out.set(flat.subarray(src, src + i + 1), row);
      src += i + 1;
    }
  }
  return out;
}

/** The scaled scores s_ij = q_i·k_j / √d_head, −∞ where the causal mask hides key j from query i.
 *  The model divides in float32 by float32(√d_head); one correctly rounded division, repeated here
 *  exactly (a double quotient of two float32 numbers rounds to the same float32). */
function scaledScores(dots, L, H, T, scale, causal) {
  const out = new Float32Array(dots.length), s = Math.fround(scale);
  for (let lh = 0; lh < L * H; lh++) {
    for (let i = 0; i < T; i++) {
      const row = (lh * T + i) * T;
      for (let j = 0; j < T; j++) out[row + j] = causal && j > i ? -Infinity : dots[row + j] / s;
    }
  }
  return out;
}

// [L,H,T,T] / [L,H,T] / [L,T] offsets
const at4 = (l, h, i, j) => ((l * S.H + h) * S.T + i) * S.T + j;
const at3 = (l, h, i) => (l * S.H + h) * S.T + i;
const at2 = (l, i) => l * S.T + i;

/** The keys query i can see in the current head: those whose score is not −∞. */
function visibleKeys(i) {
  const sc = S.A.scores, base = at4(S.layer, S.head, i, 0), out = [];
  for (let j = 0; j < S.T; j++) if (sc[base + j] !== -Infinity) out.push(j);
  return out;
}

function loadDoc(doc) {
  const A = {};
  for (const name of Object.keys(doc.arrays)) A[name] = decode(doc.arrays[name]);
  S.doc = doc; S.A = A;
  S.T = doc.tokens.length; S.L = doc.model.n_layers; S.H = doc.model.n_heads; S.k = doc.first;
  A.scores = scaledScores(A.dots, S.L, S.H, S.T, doc.scale, doc.model.causal);
  S.layer = clamp(S.layer, 0, S.L - 1); S.head = clamp(S.head, 0, S.H - 1); S.token = S.T - 1;
  window.qkv.view = doc;
  $("#text").value = doc.text;
  fillSelects(); renderTokenButtons(); drawThumbs(); measureLabels();
}

// ---------------------------------------------------------------------------------------------
// The API (same origin, relative URLs)
// ---------------------------------------------------------------------------------------------

async function api(path, body) {
  let res;
  try {
    res = await fetch(path, body === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    throw new Error(t("net_error", { msg: e.message }));
  }
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok || data === null) throw new Error((data && data.error) || `HTTP ${res.status}`);
  return data;
}

function showError(msg) {
  const el = $("#error");
  el.textContent = msg || "";
  el.hidden = !msg;
}

/** Count requests in flight; body[data-busy] is "1" while any is. */
function busy(on) {
  S.pending = Math.max(0, (S.pending || 0) + (on ? 1 : -1));
  document.body.dataset.busy = S.pending ? "1" : "0";
}

/** Analyse `text` (a string, or {ids: [...]} for tokens as generated): fetch its view, decode,
 *  redraw. t0 = when the user's event began. Only the newest request's answer is shown. */
async function analyze(text, t0, what = "text") {
  const req = ++S.req;
  busy(true);
  try {
    const doc = await api("api/view", typeof text === "string" ? { text } : text);
    if (req !== S.req) return;  // a newer request was made meanwhile
    showError("");
    loadDoc(doc);
    render(what, t0);
  } catch (e) {
    if (req === S.req) showError(e.message);
  } finally {
    busy(false);
  }
}

// ---------------------------------------------------------------------------------------------
// The redraw: everything that depends on layer, head or token. Canvases first (they measure the
// layout), then the HTML parts, each built as one string.
// ---------------------------------------------------------------------------------------------

function render(what, t0) {
  if (S.doc) {
    $("#heatmap-title").textContent = t("heatmap_title", { l: S.layer, h: S.head });
    $("#heatmap-caption").innerHTML = t("heatmap_caption") + (S.doc.model.causal ? t("heatmap_masked") : "");
    drawHeatmap(); drawLines();
    markChosen(); renderSteps(); renderHull(); renderResidual(); renderNext();
  }
  if (what === "lang" || what === "init") renderCompare();
  syncState();
  const ms = performance.now() - t0;
  // ms: the synchronous redraw; paint_ms: until the frame that shows it has been painted (layout
  // and paint included), read in a task queued from the next animation frame
  const entry = { what, ms, paint_ms: null };
  window.qkv.timings.push(entry);
  requestAnimationFrame(() => setTimeout(() => { entry.paint_ms = performance.now() - t0; }, 0));
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
}

function fillSelects() {
  const opts = (n) => Array.from({ length: n }, (_, i) => `<option value="${i}">${i}</option>`).join("");
  if ($("#layer").options.length !== S.L) $("#layer").innerHTML = opts(S.L);
  if ($("#head").options.length !== S.H) $("#head").innerHTML = opts(S.H);
}

function renderTokenButtons() {
  $("#tokens").innerHTML = S.doc.tokens.map((tok, i) =>
    `<button type="button" class="token" data-pos="${i}" title="${esc(t("token_title", { i, id: S.doc.ids[i] }))}">` +
    `${esc(tok)}</button>`).join("");  // the position is drawn by CSS (::before), outside textContent
}

/** Selects, token buttons and head thumbnails show the current choice. */
function markChosen() {
  $("#layer").value = String(S.layer);
  $("#head").value = String(S.head);
  for (const b of document.querySelectorAll("#tokens .token.chosen")) b.classList.remove("chosen");
  const b = document.querySelector(`#tokens .token[data-pos="${S.token}"]`);
  if (b) b.classList.add("chosen");
  for (const c of document.querySelectorAll("#heads canvas.on")) c.classList.remove("on");
  const c = document.querySelector(`#heads canvas[data-layer="${S.layer}"][data-head="${S.head}"]`);
  if (c) c.classList.add("on");
}

// ---------------------------------------------------------------------------------------------
// Colour: a 256-step white → blue ramp, as [r, g, b] triples in one Uint8Array
// ---------------------------------------------------------------------------------------------

const RAMP = (() => {
  const stops = [[248, 250, 253], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
  const lut = new Uint8Array(256 * 3);
  for (let n = 0; n < 256; n++) {
    const x = (n / 255) * (stops.length - 1), s = Math.min(stops.length - 2, Math.floor(x)), f = x - s;
    for (let c = 0; c < 3; c++) lut[n * 3 + c] = Math.round(stops[s][c] * (1 - f) + stops[s + 1][c] * f);
  }
  return lut;
})();
const MASKED = [226, 228, 233];

/** Paint one head's T×T pattern into `img` (ImageData T×T), one pixel per cell. */
function paintPattern(img, l, h) {
  const P = S.A.pattern, sc = S.A.scores, px = img.data, base = at4(l, h, 0, 0), n = S.T * S.T;
  for (let c = 0; c < n; c++) {
    const o = c * 4;
    if (sc[base + c] === -Infinity) {
      px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2];
    } else {
      const r = Math.round(clamp(P[base + c], 0, 1) * 255) * 3;
      px[o] = RAMP[r]; px[o + 1] = RAMP[r + 1]; px[o + 2] = RAMP[r + 2];
    }
    px[o + 3] = 255;
  }
}

/** A canvas sized to w×h CSS pixels (sharp on high-DPI screens), cleared, with its context. */
function sizeCanvas(cv, w, h) {
  const dpr = window.devicePixelRatio || 1, W = Math.round(w * dpr), H = Math.round(h * dpr);
  if (cv.width !== W || cv.height !== H) {
    cv.width = W; cv.height = H; cv.style.width = w + "px"; cv.style.height = h + "px";
  }
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

const FONT = '"Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Source Han Sans SC", system-ui, sans-serif';

function measureLabels() {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = `12px ${FONT}`;
  S.labelW = Math.min(80, Math.max(12, ...S.doc.tokens.map((tk) => ctx.measureText(tk).width)));
}

/** `s` cut to fit `w` px with an ellipsis. */
function fit(ctx, s, w) {
  if (ctx.measureText(s).width <= w) return s;
  while (s.length > 1 && ctx.measureText(s + "…").width > w) s = s.slice(0, -1);
  return s + "…";
}

// ---------------------------------------------------------------------------------------------
// Head thumbnails: drawn once per document (1 px per cell, CSS scales them up)
// ---------------------------------------------------------------------------------------------

function drawThumbs() {
  const box = $("#heads"), T = S.T;
  let canvases = box.querySelectorAll("canvas");
  if (canvases.length !== S.L * S.H) {  // a new model shape: build the grid (otherwise reuse it)
    box.style.gridTemplateColumns = `auto repeat(${S.H}, 1fr)`;
    let html = "<span></span>";
    for (let h = 0; h < S.H; h++) html += `<span class="axis">h${h}</span>`;
    for (let l = 0; l < S.L; l++) {
      html += `<span class="axis">L${l}</span>`;
      for (let h = 0; h < S.H; h++) html += `<canvas data-layer="${l}" data-head="${h}"></canvas>`;
    }
    box.innerHTML = html;
    canvases = box.querySelectorAll("canvas");
    titleThumbs();
  }
  const img = new ImageData(T, T);
  for (const cv of canvases) {
    if (cv.width !== T) { cv.width = T; cv.height = T; }
    paintPattern(img, +cv.dataset.layer, +cv.dataset.head);
    cv.getContext("2d").putImageData(img, 0, 0);
  }
}

function titleThumbs() {
  for (const cv of document.querySelectorAll("#heads canvas"))
    cv.title = t("thumb_title", { l: cv.dataset.layer, h: cv.dataset.head });
}

// ---------------------------------------------------------------------------------------------
// Heatmap: rows = queries, columns = keys
// ---------------------------------------------------------------------------------------------

const heat = { x0: 0, y0: 0, cell: 1, off: document.createElement("canvas"), img: null };

function drawHeatmap() {
  const T = S.T, cv = $("#heatmap"), avail = Math.min(560, $("#heatmap-wrap").clientWidth || 420);
  const lw = S.labelW + 8;
  const cell = clamp(Math.floor((avail - lw - 4) / T), 2, 46);
  const fs = clamp(Math.floor(cell * 0.8), 7, 12);
  const rotate = S.labelW > cell - 2;  // key labels vertical when they do not fit a column
  const top = rotate ? lw : fs + 8;
  heat.x0 = lw; heat.y0 = top; heat.cell = cell;
  const ctx = sizeCanvas(cv, lw + cell * T + 4, top + cell * T + 4);

  // the cells: paint T×T pixels, then scale up without smoothing
  if (!heat.img || heat.img.width !== T) { heat.img = new ImageData(T, T); heat.off.width = T; heat.off.height = T; }
  paintPattern(heat.img, S.layer, S.head);
  heat.off.getContext("2d").putImageData(heat.img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(heat.off, lw, top, cell * T, cell * T);

  // the weights themselves, when the cells are big enough to hold them
  const P = S.A.pattern, sc = S.A.scores, base = at4(S.layer, S.head, 0, 0);
  if (cell >= 30) {
    ctx.font = `${Math.min(11, cell / 3.2)}px ${FONT}`; ctx.textAlign = "center"; ctx.textBaseline = "middle";
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
      if (sc[base + i * T + j] === -Infinity) continue;
      const a = P[base + i * T + j];
      ctx.fillStyle = a > 0.45 ? "#fff" : "#334";
      ctx.fillText(a.toFixed(2), lw + (j + 0.5) * cell, top + (i + 0.5) * cell);
    }
  }

  // labels: every `step`-th token when the cells are small
  ctx.font = `${fs}px ${FONT}`; ctx.fillStyle = "#445";
  const step = Math.max(1, Math.ceil((fs + 1) / cell));
  for (let i = 0; i < T; i += step) {
    const tok = fit(ctx, S.doc.tokens[i], S.labelW);
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    ctx.fillStyle = i === S.token ? "#c2410c" : "#445";
    ctx.fillText(tok, lw - 5, top + (i + 0.5) * cell);
    ctx.fillStyle = "#445";
    if (rotate) {
      ctx.save(); ctx.translate(lw + (i + 0.5) * cell, top - 5); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "left"; ctx.fillText(tok, 0, 0); ctx.restore();
    } else {
      ctx.textAlign = "center"; ctx.textBaseline = "bottom";
      ctx.fillText(tok, lw + (i + 0.5) * cell, top - 4);
    }
  }
  // the chosen query's row
  ctx.strokeStyle = "#ea580c"; ctx.lineWidth = 2;
  ctx.strokeRect(lw - 1, top + S.token * cell - 1, cell * T + 2, cell + 2);
}

function heatCell(e) {
  const r = $("#heatmap").getBoundingClientRect();
  const j = Math.floor((e.clientX - r.left - heat.x0) / heat.cell), i = Math.floor((e.clientY - r.top - heat.y0) / heat.cell);
  return (i >= 0 && i < S.T && j >= 0 && j < S.T) ? { i, j } : null;
}

function showTip(e, html) {
  const tip = $("#tip");
  if (!html) { tip.hidden = true; return; }
  tip.innerHTML = html; tip.hidden = false;
  tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
  tip.style.top = (e.clientY + 14) + "px";
}

function onHeatHover(e) {
  const c = heatCell(e);
  if (!c || !S.doc) return showTip(e, null);
  const o = at4(S.layer, S.head, c.i, c.j), tk = S.doc.tokens;
  const vars = { i: c.i, j: c.j, q: esc(tk[c.i]), k: esc(tk[c.j]), a: fmt(S.A.pattern[o]) };
  showTip(e, t(S.A.scores[o] === -Infinity ? "tip_masked" : "tip_cell", vars));
}

// ---------------------------------------------------------------------------------------------
// Lines: queries left, keys right, one line per (i, j) with opacity and width from A_ij
// ---------------------------------------------------------------------------------------------

const lines = { top: 8, rowH: 20, xl: 0 };

function drawLines() {
  const T = S.T, W = clamp($("#lines-wrap").clientWidth || 400, 240, 560);
  const rowH = clamp(Math.floor(440 / T), 12, 26), top = 8;
  const fs = clamp(rowH - 4, 9, 13), lw = S.labelW * fs / 12 + 10;
  const xl = lw, xr = W - lw - 34;  // room for the weights on the right
  Object.assign(lines, { top, rowH, xl });
  const ctx = sizeCanvas($("#lines"), W, top * 2 + rowH * T);
  const y = (i) => top + (i + 0.5) * rowH;
  const P = S.A.pattern, base = at4(S.layer, S.head, 0, 0);

  // the other queries, faintly: lines grouped in 8 opacity buckets, one stroke per bucket
  const buckets = Array.from({ length: 8 }, () => new Path2D());
  for (let i = 0; i < T; i++) {
    if (i === S.token) continue;
    for (let j = 0; j < T; j++) {
      const a = P[base + i * T + j];
      if (a < 0.02) continue;
      const p = buckets[Math.min(7, Math.floor(a * 8))];
      p.moveTo(xl, y(i)); p.lineTo(xr, y(j));
    }
  }
  ctx.lineWidth = 1;
  buckets.forEach((p, b) => { ctx.strokeStyle = `rgba(71, 85, 105, ${0.04 + 0.05 * b})`; ctx.stroke(p); });

  // the chosen query, strongly
  const i = S.token;
  ctx.strokeStyle = "#1d4ed8";
  for (let j = 0; j < T; j++) {
    const a = P[base + i * T + j];
    if (a < 0.002) continue;
    ctx.globalAlpha = 0.15 + 0.85 * Math.sqrt(a); ctx.lineWidth = 0.6 + 6 * a;
    ctx.beginPath(); ctx.moveTo(xl, y(i)); ctx.lineTo(xr, y(j)); ctx.stroke();
  }
  ctx.globalAlpha = 1;

  // token labels, and the chosen query's weights beside the keys
  ctx.font = `${fs}px ${FONT}`; ctx.textBaseline = "middle";
  const vis = new Set(visibleKeys(i));
  for (let r = 0; r < T; r++) {
    const tok = fit(ctx, S.doc.tokens[r], S.labelW * fs / 12);
    ctx.textAlign = "right"; ctx.fillStyle = r === i ? "#c2410c" : "#334155";
    ctx.font = `${r === i ? "bold " : ""}${fs}px ${FONT}`;
    ctx.fillText(tok, xl - 5, y(r));
    ctx.font = `${fs}px ${FONT}`;
    ctx.textAlign = "left"; ctx.fillStyle = vis.has(r) ? "#334155" : "#b6bcc8";
    ctx.fillText(tok, xr + 5, y(r));
    if (vis.has(r)) {
      ctx.fillStyle = "#1d4ed8"; ctx.textAlign = "right";
      ctx.fillText(P[base + i * T + r].toFixed(2), W - 2, y(r));
    }
  }
}

function onLinesClick(e) {
  const r = $("#lines").getBoundingClientRect();
  if (e.clientX - r.left > r.width / 2) return;  // only the query column chooses
  const i = Math.floor((e.clientY - r.top - lines.top) / lines.rowH);
  if (i >= 0 && i < S.T) chooseToken(i);
}

// ---------------------------------------------------------------------------------------------
// Step by step: s_j, exp, softmax, a_j v_j, z for the chosen query
// ---------------------------------------------------------------------------------------------

function renderSteps() {
  const { layer: l, head: h, token: i, T, k } = S, A = S.A, doc = S.doc;
  const vis = visibleKeys(i), o4 = at4(l, h, i, 0);
  // numbers straight from the arrays; e_j = exp(s_j − m) computed here in double precision
  const s = vis.map((j) => A.scores[o4 + j]);
  const m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m));
  const sum = e.reduce((x, y) => x + y, 0);
  const a = vis.map((j) => A.pattern[o4 + j]);
  const vn = vis.map((j) => A.v_norm[at3(l, h, j)]);
  let top = 0;
  a.forEach((x, n) => { if (x > a[top]) top = n; });
  const zsum = new Float64Array(k);  // Σ_j a_j v_first_j, shown in the table's last row

  let rows = "";
  vis.forEach((j, n) => {
    const vf = at3(l, h, j) * k, av = [];
    for (let c = 0; c < k; c++) { const x = a[n] * A.v_first[vf + c]; av.push(fmt(x)); zsum[c] += x; }
    rows += `<tr data-key="${j}"${j === i ? ' class="self"' : ""}${n === top ? ' data-top="1"' : ""}>` +
      `<td data-field="pos">${j}</td><td data-field="token">${esc(doc.tokens[j])}</td>` +
      `<td data-field="dot">${fmt(A.dots[o4 + j])}</td><td data-field="scaled">${fmt(s[n])}</td>` +
      `<td data-field="shifted">${fmt(s[n] - m)}</td><td data-field="exp">${fmt(e[n])}</td>` +
      `<td data-field="weight" style="--w:${(a[n] * 100).toFixed(1)}%">${fmt(a[n])}</td>` +
      `<td data-field="v_norm">${fmt(vn[n])}</td><td data-field="contribution">${fmt(a[n] * vn[n])}</td>` +
      `<td data-field="av">${av.join(", ")}</td></tr>`;
  });
  const bound = a.reduce((acc, x, n) => acc + x * vn[n], 0);
  const total = a.reduce((x, y) => x + y, 0);
  const zo = at3(l, h, i);
  const zfirst = Array.from(A.z_first.subarray(zo * k, zo * k + k), fmt).join(", ");
  const jt = vis[top];

  const st = { dh: doc.model.d_head, scale: fmt(doc.scale), tok: esc(doc.tokens[jt]), dot: fmt(A.dots[o4 + jt]),
    s: fmt(s[top]), m: fmt(m), e: fmt(e[top]), sum: fmt(sum), a: fmt(a[top]), n: vis.length, total: fmt(total),
    k, bound: fmt(bound), more: k < doc.model.d_head ? ", …" : "",
    zfirst: `<span id="z-first" class="num">${zfirst}</span>`,
    znorm: `<span id="z-norm" class="num">${fmt(A.z_norm[zo])}</span>` };
  const th = (key, tt) => `<th${tt ? ` title="${esc(t(tt))}"` : ""}>${t(key, { k })}</th>`;
  const masked = vis.length < T || doc.model.causal;

  $("#steps-title").textContent = t("steps_title", { i, tok: doc.tokens[i], l, h });
  $("#steps").innerHTML =
    `<ol class="deriv"><li>${t("step1", st)}</li><li>${t("step2", st)}</li><li>${t("step3", st)}</li>` +
    `<li>${t("step4", st)}</li><li>${t("step5", st)}</li></ol>` +
    `<p class="caption">${t(masked ? "mask_causal" : "mask_none", { i, T })}</p>` +
    `<div class="table-wrap"><table class="steps-table"><thead><tr><th>j</th>${th("th_token")}` +
    `${th("th_dot", "tt_dot")}${th("th_scaled", "tt_scaled")}${th("th_shifted")}${th("th_exp")}` +
    `${th("th_weight", "tt_weight")}${th("th_vnorm")}${th("th_contrib", "tt_contrib")}${th("th_av")}</tr></thead>` +
    `<tbody>${rows}</tbody><tfoot><tr><td>Σ</td><td></td><td></td><td></td><td></td><td>${fmt(sum)}</td>` +
    `<td>${fmt(total)}</td><td></td><td>${fmt(bound)}</td><td>${Array.from(zsum, fmt).join(", ")}</td></tr></tfoot>` +
    `</table></div>`;
}

// ---------------------------------------------------------------------------------------------
// Convex hull: the visible values in 2-D, their hull, and z inside it
// ---------------------------------------------------------------------------------------------

/** Andrew's monotone chain: the hull's corners counter-clockwise (collinear points dropped).
 *  Returns 1 point for one distinct point, 2 for points on a line. */
function convexHull(pts) {
  const p = pts.slice().sort((u, v) => u[0] - v[0] || u[1] - v[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list) => {
    const out = [];
    for (const q of list) {
      while (out.length >= 2 && cross(out[out.length - 2], out[out.length - 1], q) <= 1e-12) out.pop();
      out.push(q);
    }
    out.pop();
    return out;
  };
  if (p.length < 2) return p;
  const hull = half(p).concat(half(p.slice().reverse()));
  if (hull.length === 0) return [p[0]];  // every point the same
  return hull;
}

function renderHull() {
  const { layer: l, head: h, token: i } = S, A = S.A, doc = S.doc;
  const vis = visibleKeys(i), o4 = at4(l, h, i, 0);
  const pts = vis.map((j) => [A.v_2d[at3(l, h, j) * 2], A.v_2d[at3(l, h, j) * 2 + 1]]);
  const zo = at3(l, h, i) * 2, z = [A.z_2d[zo], A.z_2d[zo + 1]];
  const W = 420, Hh = 320, pad = 34;
  // one scale for both axes, so the geometry is not distorted; y grows upwards
  const xs = pts.map((p) => p[0]).concat(z[0]), ys = pts.map((p) => p[1]).concat(z[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sc = Math.min((W - 2 * pad) / Math.max(x1 - x0, 1e-9), (Hh - 2 * pad) / Math.max(y1 - y0, 1e-9));
  const cx = (W - sc * (x1 - x0)) / 2, cy = (Hh - sc * (y1 - y0)) / 2;
  const X = (x) => (cx + (x - x0) * sc).toFixed(1), Y = (y) => (Hh - cy - (y - y0) * sc).toFixed(1);

  const hull = convexHull(pts);
  let svg = `<svg viewBox="0 0 ${W} ${Hh}" role="img" aria-label="${esc(t("hull_title"))}">`;
  if (hull.length >= 3) svg += `<polygon class="hull" points="${hull.map((p) => X(p[0]) + "," + Y(p[1])).join(" ")}"/>`;
  else if (hull.length === 2) svg += `<line class="hull-line" x1="${X(hull[0][0])}" y1="${Y(hull[0][1])}" x2="${X(hull[1][0])}" y2="${Y(hull[1][1])}"/>`;
  // spokes from z to each value, as strong as its weight
  pts.forEach((p, n) => {
    const a = A.pattern[o4 + vis[n]];
    if (a >= 0.01) svg += `<line class="spoke" x1="${X(z[0])}" y1="${Y(z[1])}" x2="${X(p[0])}" y2="${Y(p[1])}" stroke-opacity="${(0.1 + 0.7 * a).toFixed(2)}"/>`;
  });
  // with many keys, label only the query itself and the 12 heaviest (every point has a tooltip)
  const heavy = new Set(vis.slice().sort((u, v) => A.pattern[o4 + v] - A.pattern[o4 + u]).slice(0, 12));
  pts.forEach((p, n) => {
    const j = vis[n], a = A.pattern[o4 + j], r = (2.5 + 14 * Math.sqrt(a)).toFixed(1);
    const label = vis.length <= 16 || heavy.has(j) || j === i;
    svg += `<g class="pt${j === i ? " self" : ""}"><title>${esc(t("hull_point", { j, tok: doc.tokens[j], a: fmt(a) }))}</title>` +
      `<circle cx="${X(p[0])}" cy="${Y(p[1])}" r="${r}" fill-opacity="${(0.25 + 0.6 * Math.sqrt(a)).toFixed(2)}"/>` +
      (label ? `<text x="${(+X(p[0]) + +r + 3).toFixed(1)}" y="${(+Y(p[1]) + 4).toFixed(1)}">${esc(doc.tokens[j])}</text>` : "") + "</g>";
  });
  const zx = +X(z[0]), zy = +Y(z[1]);
  svg += `<g class="z"><title>${esc(t("hull_z"))}</title><path d="M${zx - 6},${zy - 6}L${zx + 6},${zy + 6}M${zx - 6},${zy + 6}L${zx + 6},${zy - 6}"/>` +
    `<text x="${zx + 8}" y="${zy - 7}">z</text></g></svg>`;
  $("#hull").innerHTML = svg;
  const kept = A.kept_2d[l * S.H + h];
  $("#hull-caption").innerHTML = t("hull_caption", { kept: (100 * kept).toFixed(1) });
}

// ---------------------------------------------------------------------------------------------
// Residual update at the chosen layer and token
// ---------------------------------------------------------------------------------------------

const RESID_ROWS = [
  ["x", "x", "x_norm"], ["head_out", "|z<sub>h</sub>W<sub>O</sub>[h]|", "head_out_norm"],
  ["attn_out", "attn_out", "attn_out_norm"], ["x_plus_attn", "x + attn_out", "x_plus_attn_norm"],
  ["resid_mid", "resid_mid", "resid_mid_norm"], ["mlp_out", "mlp_out", "mlp_out_norm"],
  ["resid_post", "resid_post", "resid_post_norm"],
];

function renderResidual() {
  const { layer: l, head: h, token: i } = S, A = S.A, model = S.doc.model;
  const value = (arr) => (arr === "head_out_norm" ? A[arr][at3(l, h, i)] : A[arr][at2(l, i)]);
  const vals = RESID_ROWS.map((r) => value(r[2]));
  const max = Math.max(...vals, 1e-12);
  const post = model.norm === "post";
  let html = '<div class="rrows">';
  RESID_ROWS.forEach(([field, label], n) => {
    const desc = t(field === "resid_mid" && post ? "r_resid_mid_post" : "r_" + field, { h });
    html += `<div class="rrow" data-row="${field}"><span class="rlabel">${label}</span><span class="rdesc">${desc}</span>` +
      `<span class="rval" data-field="${field}" data-value="${vals[n]}"><span class="rbar" style="width:${(100 * vals[n] / max).toFixed(1)}%"></span>` +
      `<span class="num">${fmt(vals[n])}</span></span></div>`;
  });
  const cos = A.update_cos[at2(l, i)];
  const hint = t(Math.abs(cos) < 0.2 ? "cos_orth" : cos > 0 ? "cos_along" : "cos_against");
  const rule = model.residual === false ? "res_off" : post ? "res_post" : model.norm === "none" ? "res_none" : "res_pre";
  html += `</div><p class="cos">${t("cos_line", { cos: `<span id="update-cos" class="num">${fmt(cos)}</span>`, hint })}</p>` +
    `<p class="caption">${t(rule)}</p>`;
  $("#residual-title").textContent = t("residual_title", { tok: S.doc.tokens[i], l });
  $("#residual").innerHTML = html;
}

// ---------------------------------------------------------------------------------------------
// Next token: the top 10 at the chosen position, and the token that actually follows
// ---------------------------------------------------------------------------------------------

function renderNext() {
  const i = S.token, A = S.A, doc = S.doc, K = A.next_probs.length / S.T;
  const actual = i + 1 < S.T ? doc.ids[i + 1] : null;
  const pmax = Math.max(A.next_probs[i * K], 1e-12);
  let html = `<p class="caption">${t("next_caption")}</p><div class="bars">`;
  for (let r = 0; r < K; r++) {
    const id = A.next_ids[i * K + r], p = A.next_probs[i * K + r], tok = doc.vocab[String(id)] ?? `#${id}`;
    const hit = id === actual;
    html += `<div class="bar${hit ? " actual" : ""}" data-rank="${r + 1}" data-id="${id}" data-prob="${p}">` +
      `<span class="rank">${r + 1}</span><span class="tok">${esc(tok)}</span>` +
      `<span class="track"><span class="fill" style="width:${(100 * p / pmax).toFixed(1)}%"></span></span>` +
      `<span class="prob num">${fmt(p)}</span></div>`;
  }
  html += "</div>";
  if (actual !== null) {
    html += `<p id="next-actual" class="actual-line">${t("next_actual", { tok: esc(doc.tokens[i + 1]),
      p: `<span class="num" data-field="actual_prob">${fmt(A.actual_prob[i])}</span>`,
      r: `<span class="num" data-field="actual_rank">${A.actual_rank[i]}</span>` })}</p>`;
  } else {
    html += `<p id="next-actual" class="actual-line">${t("next_last")}</p>`;
  }
  $("#next-title").textContent = t("next_title", { tok: doc.tokens[i], i });
  $("#next").innerHTML = html;
}

// ---------------------------------------------------------------------------------------------
// Compare: one word's vector in two sentences, stage by stage
// ---------------------------------------------------------------------------------------------

function renderCompare() {
  const box = $("#compare-result"), c = S.compare;
  if (!c) { box.innerHTML = S.mode === "static" ? `<p class="caption">${t("compare_none")}</p>` : ""; return; }
  const sent = (name, s) => `<div class="csent"><b>${name}</b> ${s.tokens.map((tk, n) =>
    `<span class="ctok${n === s.pos ? " hit" : ""}">${esc(tk)}</span>`).join("")}</div>`;
  let html = sent("A", c.a) + sent("B", c.b) + '<div class="crows">';
  for (const st of c.stages) {
    const none = st.cosine === null;  // a zero vector: the angle has no value
    const w = none ? "0" : (100 * Math.min(1, Math.abs(st.cosine))).toFixed(1);
    html += `<div class="crow"><span class="clabel">${esc(st.label)}</span>` +
      `<span class="cval" data-stage="${esc(st.label)}" data-cosine="${st.cosine}">` +
      `<span class="cbar${st.cosine < 0 ? " neg" : ""}" style="width:${w}%"></span><span class="num">${none ? "—" : fmt(st.cosine)}</span></span></div>`;
  }
  const pos = S.info && ["learned", "sinusoidal"].includes(S.info.pos);  // is a position vector added at "L0 in"?
  html += `</div><p class="caption">${t(pos ? "compare_caption" : "compare_caption_nopos", { w: esc(c.word) })}</p>`;
  box.innerHTML = html;
  box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
}

async function runCompare() {
  const body = { a: $("#compare-a").value, b: $("#compare-b").value, word: $("#compare-word").value };
  busy(true);
  try {
    S.compare = await api("api/compare", body);
    showError("");
    renderCompare();
  } catch (e) {
    showError(e.message);
  } finally {
    busy(false);
  }
}

// ---------------------------------------------------------------------------------------------
// Generate
// ---------------------------------------------------------------------------------------------

/** The number in input `id`, or null when empty and `optional`; throws a translated error. */
function readNumber(id, label, optional, integer) {
  const raw = $(id).value.trim();
  if (raw === "" && optional) return null;
  const x = Number(raw);
  if (raw === "" || !Number.isFinite(x) || (integer && !Number.isInteger(x))) throw new Error(t("bad_number", { name: label }));
  return x;
}

async function runGenerate() {
  const t0 = performance.now();
  let body;
  try {
    body = {
      text: $("#text").value,
      max_new_tokens: readNumber("#max-new", t("max_new"), false, true),
      temperature: readNumber("#temperature", t("temperature"), false, false),
      top_k: readNumber("#top-k", "top-k", true, true),
      top_p: readNumber("#top-p", "top-p", true, false),
      seed: readNumber("#seed", t("seed"), true, true),
    };
  } catch (e) { showError(e.message); return; }
  busy(true);
  try {
    const res = await api("api/generate", body);
    S.added = res.added;
    renderAdded();
    $("#text").value = res.text;
    await analyze({ ids: res.ids }, t0);  // the generated tokens themselves: re-tokenizing the text may differ
  } catch (e) {
    showError(e.message);
  } finally {
    busy(false);
  }
}

function renderAdded() {
  const el = $("#gen-added");
  el.hidden = S.added === null;
  if (S.added !== null) el.textContent = t("gen_added", { text: S.added });
}

// ---------------------------------------------------------------------------------------------
// Language and the static parts of the page
// ---------------------------------------------------------------------------------------------

function initialLang() {
  const q = new URLSearchParams(location.search).get("lang");
  if (q === "zh" || q === "en") return q;
  return (navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

function applyLang() {
  document.documentElement.lang = S.lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) el.innerHTML = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of document.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  $("#lang").textContent = t("lang_button");
  renderModelLine();
  renderAdded();
  if (S.doc) {
    for (const b of document.querySelectorAll("#tokens .token"))
      b.title = t("token_title", { i: b.dataset.pos, id: S.doc.ids[+b.dataset.pos] });
    titleThumbs();
  }
}

function renderModelLine() {
  const m = S.info || (S.doc && S.doc.model);
  if (!m) return;
  $("#model-line").textContent = t("model_line", { L: m.n_layers, H: m.n_heads, dm: m.d_model, dh: m.d_head,
    nctx: m.n_ctx, tok: t("tok_" + m.tokenizer), params: Number(m.parameters).toLocaleString("en-US"),
    norm: t("norm_" + m.norm) }) + (m.name ? ` · ${m.name}` : "");
  $("#hint").textContent = t("hint_" + m.tokenizer);
}

function setModel(m) {
  // /api/model's answer: {kind, model, examples, compare}; accept a bare model object too
  const info = m && m.model ? m.model : m;
  S.info = info || null;
  S.examples = (m && m.examples) || [];
  $("#examples").innerHTML = S.examples.map((ex, n) =>
    `<button type="button" class="example" data-n="${n}">${esc(ex)}</button>`).join("");
  const c = m && m.compare;
  if (c) { $("#compare-a").value = c.a || ""; $("#compare-b").value = c.b || ""; $("#compare-word").value = c.word || ""; }
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

function chooseToken(i) {
  const t0 = performance.now();
  if (!S.doc) return;
  S.token = i;
  render("token", t0);
}

function chooseHead(l, h, what, t0) {
  S.layer = l; S.head = h;
  render(what, t0);
}

function bind() {
  $("#analyze").addEventListener("click", () => analyze($("#text").value, performance.now()));
  $("#text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {  // Shift+Enter types a newline
      e.preventDefault();
      analyze($("#text").value, performance.now());
    }
  });
  $("#examples").addEventListener("click", (e) => {
    const b = e.target.closest(".example");
    if (b && S.mode === "live") { const t0 = performance.now(); $("#text").value = S.examples[+b.dataset.n]; analyze($("#text").value, t0); }
  });
  $("#tokens").addEventListener("click", (e) => {
    const b = e.target.closest(".token");
    if (b) chooseToken(+b.dataset.pos);
  });
  $("#layer").addEventListener("change", (e) => { const t0 = performance.now(); chooseHead(+e.target.value, S.head, "layer", t0); });
  $("#head").addEventListener("change", (e) => { const t0 = performance.now(); chooseHead(S.layer, +e.target.value, "head", t0); });
  $("#heads").addEventListener("click", (e) => {
    const c = e.target.closest("canvas");
    if (!c) return;
    const t0 = performance.now(), l = +c.dataset.layer, h = +c.dataset.head;
    chooseHead(l, h, l !== S.layer ? "layer" : "head", t0);
  });
  document.addEventListener("keydown", (e) => {  // ← / → move the query token (outside text fields)
    if (!S.doc || e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, textarea, select")) return;
    const step = e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : 0;
    if (step && S.token + step >= 0 && S.token + step < S.T) { e.preventDefault(); chooseToken(S.token + step); }
  });
  const hm = $("#heatmap");
  hm.addEventListener("mousemove", onHeatHover);
  hm.addEventListener("mouseleave", (e) => showTip(e, null));
  hm.addEventListener("click", (e) => { const c = heatCell(e); if (c) chooseToken(c.i); });
  $("#lines").addEventListener("click", onLinesClick);
  $("#lang").addEventListener("click", () => {
    const t0 = performance.now();
    S.lang = S.lang === "zh" ? "en" : "zh";
    try { const u = new URL(location.href); u.searchParams.set("lang", S.lang); history.replaceState(null, "", u); } catch (e) { /* file:// */ }
    applyLang();
    render("lang", t0);
  });
  $("#generate").addEventListener("click", runGenerate);
  $("#compare-run").addEventListener("click", runCompare);
  let pending = false;  // redraw the canvases when the window changes size (not a user event: no timing)
  window.addEventListener("resize", () => {
    if (pending || !S.doc) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawHeatmap(); drawLines(); });
  });
}

// ---------------------------------------------------------------------------------------------
// Start: static snapshot (embedded data) or live (the API)
// ---------------------------------------------------------------------------------------------

async function init() {
  const t0 = performance.now();
  S.lang = initialLang();
  bind();
  const embedded = document.getElementById("qkv-data");
  if (embedded) {
    S.mode = "static";
    const data = JSON.parse(embedded.textContent);
    setModel(data.model || (data.view && data.view.model));
    for (const id of ["#text", "#analyze", "#generate", "#compare-run", "#compare-a", "#compare-b", "#compare-word"]) $(id).disabled = true;
    for (const b of document.querySelectorAll("#examples .example, #gen input")) b.disabled = true;
    $("#static-note").hidden = false;
    S.compare = data.compare || null;
    if (data.view) loadDoc(data.view);
    applyLang();
    render("init", t0);
    return;
  }
  applyLang();
  busy(true);
  try {
    const m = await api("api/model");
    setModel(m);
    applyLang();
    if (S.examples.length) {
      $("#text").value = S.examples[0];
      await analyze(S.examples[0], t0, "init");  // guarded: a click meanwhile wins
    } else {
      render("init", t0);
    }
    if ($("#compare-word").value) runCompare();
  } catch (e) {
    showError(e.message);
  } finally {
    busy(false);
  }
}

init();
