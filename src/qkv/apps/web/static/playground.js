// The attention playground (a panel, registered in panels.js). One query q, 2–6 keys k_j with
// their values v_j, all in the plane, and a chosen d_k; computed here in the browser, step for step
// as qkv.analysis.attend does it (pg_state.js), so it also works in the static export (no server).
// Numbers are shown as `qkv attend` shows them (its "display"): an exact form r·B when there is one
// (numbers.closed_form: r = p/q with q ≤ 64, B one of 1, √n, ln n, √n·ln m, π, e), else 6 digits.
// Speed: the DOM is built once per layout (pg_draw.js); a drag or an edit only schedules one redraw
// per animation frame. Tests and benchmarks/playground_fps.py read window.qkv.playground (measure.js).

import { clamp } from "./util.js";
import { I18N } from "./i18n.js";
import { register } from "./panels.js";
import { pgClosed, pgFmt } from "./exact.js";
import { PG, PG_PRESETS, pgKey, pgLoad, pgN, pgName, pgRead, pgSetRef, pgSnapshot } from "./pg_state.js";
import { pgBuild, pgDragTo, pgDraw, pgFit, pgSchedule, pgWrite } from "./pg_draw.js";

Object.assign(I18N.en, {
  pg_title: "Attention playground: one query, a few keys, in the plane",
  pg_intro: "Drag q, a key k<sub>j</sub> or a value v<sub>j</sub>, or type their coordinates. Every step below is recomputed at once, in the page, the way <code>qkv attend</code> derives it, and shown in exact form (1/2, ln 2, √2) where the number has one.",
  pg_presets: "Presets",
  pg_preset_article: "The articles' example", pg_preset_dominant: "One key dominates",
  pg_preset_equal: "All keys equal", pg_preset_temperature: "Temperature",
  pg_about_article: "The worked example of the articles: the scores come out as ln 2, 0, 0, so e<sup>s</sup> is 2, 1, 1 and the weights are 1/2, 1/4, 1/4; z = (1, 1) sits inside the triangle of the three values.",
  pg_about_dominant: "k<sub>1</sub> points where q points and is long, so its score towers over the others: softmax hands it nearly all the weight and z lands almost on v<sub>1</sub>, close to a plain look-up.",
  pg_about_equal: "The keys are different points, but all lie on one line at right angles to q, so every q·k<sub>j</sub> is the same: each weight is 1/n and z is the plain average (the centroid) of the values.",
  pg_about_changed: "You changed the numbers of “{name}”: what this preset said about them no longer holds (the table below shows what they give now). Press “{name}” again to bring them back.",
  pg_about_temperature: "Same q, K and V; only d<sub>k</sub> changes. Dividing the scores by √d<sub>k</sub> acts like a temperature: a small d<sub>k</sub> sharpens the weights toward the best-matching key, a large one flattens them toward 1/n. Move the d<sub>k</sub> slider, or compare the rows at the bottom.",
  pg_kplane: "Query and keys. The dashed lines drop each k<sub>j</sub> onto the direction of q: the farther along q, the larger q·k<sub>j</sub>.",
  pg_vplane: "Values, their convex hull (shaded) and z (✕); each spoke is as strong as its weight.",
  pg_key: "key", pg_value: "value", pg_add: "+ key", pg_del: "remove this key and its value",
  pg_dk_title: "the d_k in s = q·k / √d_k: any positive number",
  pg_move: "Move halfway to q", pg_move_title: "k_j ← k_j + (q − k_j)/2, and show before → after",
  pg_drag_tip: "Drag a point with the mouse: it snaps to steps of 0.05 (hold Shift for 0.0001).",
  pg_forms: "Coordinates and d<sub>k</sub> accept numbers (−1, 0.35, 1e-3), + − * / and brackets, powers 2^-1 or 2**-1, sqrt(2) or √2, ln(2) or ln 2, log(x) (natural) or log(x, b), exp(1), pi or π, e; a number right before a name multiplies it (2√3, 3 ln 2).",
  pg_th_dot: "q·k<sub>j</sub> = q<sub>1</sub>k<sub>j1</sub> + q<sub>2</sub>k<sub>j2</sub>",
  pg_th_s: "s<sub>j</sub> = q·k<sub>j</sub> / √d<sub>k</sub>", pg_th_shift: "s<sub>j</sub> − max s",
  pg_th_exp: "e<sup>s<sub>j</sub></sup>", pg_th_exps: "e<sup>s<sub>j</sub> − max s</sup>", pg_th_a: "a<sub>j</sub>",
  pg_th_delta: "Δa<sub>j</sub>", pg_th_av: "a<sub>j</sub>v<sub>j</sub>",
  pg_delta_title: "the change of a_j since the last drag, edit or move began (the faint marks in the planes show where things were)",
  pg_stable: "softmax is computed in the stable form e<sup>s<sub>j</sub> − max s</sup> / Σ e<sup>s<sub>i</sub> − max s</sup>: the same weights, and no e<sup>s</sup> can overflow.",
  pg_hull: "z = {sum} = ({z}): the weights are ≥ 0 and add up to 1, so z is a convex combination of the values (the a<sub>j</sub> are its barycentric weights) and lies in their hull — {where}.",
  pg_inside: "checked on the drawing: inside", pg_edge: "checked on the drawing: on its boundary",
  pg_outside: "checked on the drawing: outside (this should never happen)",
  pg_change: "Before → after ({what}): a = ({a0}) → ({a1}); z = ({z0}) → ({z1}).",
  pg_nochange: "Drag a point, type a coordinate or press “Move halfway to q”: how each weight changes shows here and in the Δa column.",
  pg_temp_title: "The same q, K and V at other d<sub>k</sub>",
  pg_temp_caption: "√d<sub>k</sub> works as a temperature: the scores are divided by it before softmax, so a small d<sub>k</sub> sharpens the weights and a large one flattens them toward 1/n.",
  pg_now: "now",
  pg_err_empty: "empty number", pg_err_long: "the text is too long",
  pg_err_at: "cannot read “{text}”: unexpected “{tok}”", pg_err_end: "cannot read “{text}”: it stops too early",
  pg_err_name: "unknown name “{name}” (allowed: sqrt, √, ln, log, exp, pi, π, e)",
  pg_err_args: "{name}() takes {n} argument(s)", pg_err_finite: "“{text}” is not a finite real number",
  pg_err_dk: "d_k must be a positive number", pg_err_overflow: "q·k{j} passes the largest float: use smaller numbers",
  pg_err_in: "{where}: {msg} (the last number that could be read is used)",
});
Object.assign(I18N.zh, {
  pg_title: "注意力试验场：平面上的一个查询和几个键",
  pg_intro: "拖动 q、某个键 k<sub>j</sub> 或值 v<sub>j</sub>，或直接输入坐标。下面每一步都会立刻在页面里重新计算，做法与 <code>qkv attend</code> 相同；数值有精确形式（1/2、ln 2、√2）时就显示精确形式。",
  pg_presets: "预设",
  pg_preset_article: "文章的例子", pg_preset_dominant: "一个键占主导",
  pg_preset_equal: "所有键同分", pg_preset_temperature: "温度",
  pg_about_article: "文章里的手算例子：分数是 ln 2、0、0，于是 e<sup>s</sup> 为 2、1、1，权重为 1/2、1/4、1/4；z = (1, 1) 落在三个值向量围成的三角形里。",
  pg_about_dominant: "k<sub>1</sub> 与 q 同向而且很长，分数远高于其他键：softmax 几乎把全部权重都给了它，z 几乎落在 v<sub>1</sub> 上，接近一次直接查表。",
  pg_about_equal: "这几个键位置各不相同，却都在一条与 q 垂直的直线上，所以每个 q·k<sub>j</sub> 都一样：每个权重都是 1/n，z 就是各值向量的平均（重心）。",
  pg_about_changed: "你改动了「{name}」里的数：这个预设原来那段说明已不再成立（下面的表给出现在这些数的结果）。再按一次「{name}」即可恢复。",
  pg_about_temperature: "q、K、V 不变，只改 d<sub>k</sub>。分数除以 √d<sub>k</sub> 就像温度：d<sub>k</sub> 小，权重更集中到最匹配的键；d<sub>k</sub> 大，权重趋向 1/n。拖动 d<sub>k</sub> 滑块，或比较最下面几行。",
  pg_kplane: "查询与键。虚线把每个 k<sub>j</sub> 投影到 q 的方向上：沿 q 的方向越远，q·k<sub>j</sub> 越大。",
  pg_vplane: "值向量、它们的凸包（阴影）和 z（✕）；每条连线的深浅对应其权重。",
  pg_key: "键", pg_value: "值", pg_add: "+ 键", pg_del: "删除这个键及其值向量",
  pg_dk_title: "s = q·k / √d_k 中的 d_k：任意正数",
  pg_move: "向 q 移动一半", pg_move_title: "k_j ← k_j + (q − k_j)/2，并显示前后对比",
  pg_drag_tip: "用鼠标拖动点：坐标按 0.05 对齐（按住 Shift 则按 0.0001）。",
  pg_forms: "坐标和 d<sub>k</sub> 可以输入：数字（−1、0.35、1e-3）、+ − * / 与括号、乘方 2^-1 或 2**-1、sqrt(2) 或 √2、ln(2) 或 ln 2、log(x)（自然对数）或 log(x, b)、exp(1)、pi 或 π、e；数字紧接名字表示相乘（2√3、3 ln 2）。",
  pg_th_dot: "q·k<sub>j</sub> = q<sub>1</sub>k<sub>j1</sub> + q<sub>2</sub>k<sub>j2</sub>",
  pg_th_s: "s<sub>j</sub> = q·k<sub>j</sub> / √d<sub>k</sub>", pg_th_shift: "s<sub>j</sub> − max s",
  pg_th_exp: "e<sup>s<sub>j</sub></sup>", pg_th_exps: "e<sup>s<sub>j</sub> − max s</sup>", pg_th_a: "a<sub>j</sub>",
  pg_th_delta: "Δa<sub>j</sub>", pg_th_av: "a<sub>j</sub>v<sub>j</sub>",
  pg_delta_title: "从上次拖动、编辑或移动开始以来 a_j 的变化（平面上的淡色记号标出原来的位置）",
  pg_stable: "softmax 按稳定形式计算：e<sup>s<sub>j</sub> − max s</sup> / Σ e<sup>s<sub>i</sub> − max s</sup>，权重不变，而且任何 e<sup>s</sup> 都不会溢出。",
  pg_hull: "z = {sum} = ({z})：权重都 ≥ 0 且和为 1，所以 z 是各值向量的凸组合（a<sub>j</sub> 就是它的重心坐标），位于它们的凸包内 —— {where}。",
  pg_inside: "按图验证：在内部", pg_edge: "按图验证：在边界上", pg_outside: "按图验证：在外面（不应出现）",
  pg_change: "前 → 后（{what}）：a = ({a0}) → ({a1})；z = ({z0}) → ({z1})。",
  pg_nochange: "拖动一个点、输入坐标或按“向 q 移动一半”：每个权重如何变化会显示在这里和 Δa 列。",
  pg_temp_title: "同样的 q、K、V，换成别的 d<sub>k</sub>",
  pg_temp_caption: "√d<sub>k</sub> 起到温度的作用：softmax 之前分数先除以它，所以 d<sub>k</sub> 小时权重更尖锐，d<sub>k</sub> 大时权重更平、趋向 1/n。",
  pg_now: "当前",
  pg_err_empty: "数字为空", pg_err_long: "文字太长",
  pg_err_at: "无法读取“{text}”：意外的“{tok}”", pg_err_end: "无法读取“{text}”：还没写完",
  pg_err_name: "未知的名字“{name}”（可用：sqrt、√、ln、log、exp、pi、π、e）",
  pg_err_args: "{name}() 需要 {n} 个参数", pg_err_finite: "“{text}”不是有限的实数",
  pg_err_dk: "d_k 必须是正数", pg_err_overflow: "q·k{j} 超出了浮点数的最大值：请用小一些的数",
  pg_err_in: "{where}：{msg}（仍使用上一个能读取的数）",
});


// ---------------------------------------------------------------------------------------------
// Changes: typing, dragging, moving a key toward q, presets, keys added or removed
// ---------------------------------------------------------------------------------------------

function pgDragStart(e) {
  const g = e.target.closest(".pg-pt"), svg = e.target.closest("svg");
  if (!g || !svg || e.button !== 0) return;
  e.preventDefault();
  const kind = g.dataset.kind, j = +g.dataset.j;
  pgSetRef(kind === "q" ? "q" : `${kind === "K" ? "k" : "v"}${j + 1}`);
  PG.drag = { kind, j, id: e.pointerId, rect: svg.getBoundingClientRect(), at: null, shift: false };
  svg.setPointerCapture(e.pointerId);
  g.classList.add("dragging");
}

function pgDragMove(e) {
  if (!PG.drag || e.pointerId !== PG.drag.id) return;
  PG.drag.at = [e.clientX, e.clientY];
  PG.drag.shift = e.shiftKey;
  pgSchedule();
}

function pgDragEnd(e) {
  if (!PG.drag || e.pointerId !== PG.drag.id) return;
  if (PG.drag.at) pgDragTo();
  PG.drag = null;
  for (const g of PG.el.box.querySelectorAll(".pg-pt.dragging")) g.classList.remove("dragging");
  pgFit(false);
  pgSchedule();
}

function pgMoveToward() {
  const j = +PG.el["move-j"].value, k = PG.K[j];
  pgSetRef(`k${j + 1} → q`);
  [0, 1].forEach((i) => {
    const v = k[i] + (PG.q[i] - k[i]) / 2;
    pgWrite("K", j, i, pgClosed(v) ?? String(v));
  });
  pgFit(false);
  pgSchedule();
}

function pgPreset(name) {
  PG.preset = name;
  pgLoad(PG_PRESETS[name]);
  PG.presetAt = pgSnapshot();  // its numbers: the claim under the buttons holds while they are these
  pgRebuild();
}

function pgRebuild() {
  const j = PG.el ? PG.el["move-j"].value : "0";
  pgBuild();
  PG.el["move-j"].value = +j < pgN() ? j : "0";
  pgSyncRange();
  pgDraw();
}

function pgSyncRange() { PG.el.range.value = String(clamp(Math.log2(PG.dk), -4, 8)); }

function pgAddKey() {
  const n = pgN(), a = 0.6 + 2.4 * n, at = (r, i) => String(Math.round(r * (i ? Math.sin(a) : Math.cos(a)) * 20) / 20 + 0);
  PG.text.K.push([at(1.5, 0), at(1.5, 1)]); PG.text.V.push([at(3, 0), at(3, 1)]);
  PG.K.push([0, 0]); PG.V.push([0, 0]);
  [0, 1].forEach((i) => { pgRead("K", n, i, PG.text.K[n][i]); pgRead("V", n, i, PG.text.V[n][i]); });
  PG.preset = null; PG.ref = null;
  pgRebuild();
}

function pgRemoveKey(j) {
  PG.text.K.splice(j, 1);
  PG.text.V.splice(j, 1);
  pgLoad(PG.text);  // read every text again: the keys after j move up by one
  PG.preset = null;
  pgRebuild();
}

function pgBind(box) {
  box.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b) return;
    if (b.dataset.preset) pgPreset(b.dataset.preset);
    else if (b.classList.contains("pg-add") && pgN() < 6) pgAddKey();
    else if (b.classList.contains("pg-del") && pgN() > 2) pgRemoveKey(+b.dataset.j);
    else if (b.classList.contains("pg-move")) pgMoveToward();
  });
  box.addEventListener("focusin", (e) => {
    if (e.target.classList.contains("pg-in") || e.target.classList.contains("pg-range")) {
      const inp = e.target;
      pgSetRef(inp.classList.contains("pg-range") ? "d_k" : pgName(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i));
    }
  });
  box.addEventListener("input", (e) => {
    const inp = e.target;
    if (inp.classList.contains("pg-range")) {
      pgWrite("dk", 0, 0, pgFmt(Math.pow(2, +inp.value)));
      PG.el.inputs.dk.classList.remove("bad");
    } else if (inp.classList.contains("pg-in")) {
      const key = pgKey(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i);
      pgRead(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i, inp.value);
      inp.classList.toggle("bad", key in PG.errors);
      if (inp.dataset.kind === "dk") pgSyncRange(); else pgFit(false);
    } else return;
    pgSchedule();
  });
  box.addEventListener("pointerdown", pgDragStart);
  box.addEventListener("pointermove", pgDragMove);
  box.addEventListener("pointerup", pgDragEnd);
  box.addEventListener("pointercancel", pgDragEnd);
}

register({
  name: "playground",
  init() {
    const box = document.getElementById("playground");
    if (!box) return;
    pgLoad(PG_PRESETS.article);
    PG.presetAt = pgSnapshot();
    pgBind(box);
    pgRebuild();
  },
  lang() {
    if (!PG.el) return;
    // messages are in the old language: read every text again
    const texts = JSON.parse(JSON.stringify(PG.text)), ref = PG.ref, what = PG.what;
    pgLoad(texts);
    PG.ref = ref; PG.what = what;
    pgRebuild();
  },
});
