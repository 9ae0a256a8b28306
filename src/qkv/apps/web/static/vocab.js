// vocab panel (registered in panels.js): what the model knows. api/vocab (qkv.analysis.vocab) lists the
// tokenizer's tokens with their kind and how often each occurs in the model's training text (when the
// server can find that text), most frequent first; the list filters as one types (prefix or substring,
// and a kind). Clicking a token appends it to the text box. The static export has no server: a note.

import { S, model } from "./state.js";
import { $, esc } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api } from "./api.js";
import { formKeep, register } from "./panels.js";

Object.assign(I18N.en, {
  vocab_title: "What the model knows",
  vocab_search: "Search", vocab_placeholder: "a word, or its start",
  vocab_prefix: "starts with", vocab_substring: "contains",
  vocab_all: "every kind", vocab_kind_word: "words", vocab_kind_char: "characters", vocab_kind_byte: "bytes",
  vocab_kind_piece: "word pieces", vocab_kind_special: "special",
  vocab_one_word: "word", vocab_one_char: "character", vocab_one_byte: "byte", vocab_one_piece: "piece", vocab_one_special: "special",
  vocab_summary: "{n} of {size} tokens match; {shown} shown.",
  vocab_kinds: "The vocabulary: {parts}.",
  vocab_more: "Show more",
  vocab_counted: "Count: how often the token occurs in the model's training text ({src}, {total} tokens), read by its tokenizer; sorted by count. Click a token to add it to the text.",
  vocab_uncounted: "Counts unknown ({why}); sorted by id. Click a token to add it to the text.",
  vocab_untyped: "a byte or special token: it cannot be typed",
  vocab_static: "The vocabulary browser asks the model's tokenizer: run <code>qkv serve</code> to browse it.",
  vocab_none: "No token matches.", vocab_corpus: "qkv corpus", vocab_corpus_hsk: "qkv corpus and the HSK training sentences",
});
Object.assign(I18N.zh, {
  vocab_title: "模型认识哪些词",
  vocab_search: "搜索", vocab_placeholder: "一个词，或它的开头",
  vocab_prefix: "开头是", vocab_substring: "包含",
  vocab_all: "所有种类", vocab_kind_word: "词", vocab_kind_char: "字符", vocab_kind_byte: "字节",
  vocab_kind_piece: "词片", vocab_kind_special: "特殊词元",
  vocab_one_word: "词", vocab_one_char: "字符", vocab_one_byte: "字节", vocab_one_piece: "词片", vocab_one_special: "特殊",
  vocab_summary: "{size} 个词元中有 {n} 个符合；显示 {shown} 个。",
  vocab_kinds: "词表：{parts}。",
  vocab_more: "显示更多",
  vocab_counted: "次数：这个词元在模型训练文本（{src}，共 {total} 个词元，用它的分词器切分）中出现的次数；按次数排序。点击词元可把它加到文本框里。",
  vocab_uncounted: "次数未知（{why}）；按编号排序。点击词元可把它加到文本框里。",
  vocab_untyped: "字节或特殊词元：无法直接输入",
  vocab_static: "词表浏览器要查询模型的分词器：运行 <code>qkv serve</code> 才能浏览。",
  vocab_none: "没有符合的词元。", vocab_corpus: "qkv 内置语料", vocab_corpus_hsk: "qkv 内置语料和 HSK 训练句",
});

const VOCAB_PAGE = 200, VOCAB_WAIT = 150;
// the training texts the server names (analysis.vocab.training_text), as the page says them
const TEXTS = { "qkv corpus": "vocab_corpus", "qkv corpus + HSK": "vocab_corpus_hsk" };
const VOCAB = { doc: null, rows: [], req: 0, timer: 0, off: false };

function vocabBuild() {
  const kinds = ["word", "char", "byte", "piece", "special"].map((k) =>
    `<option value="${k}" data-i18n="vocab_kind_${k}">${t("vocab_kind_" + k)}</option>`).join("");
  $("#vocab").innerHTML =
    `<h2 data-i18n="vocab_title">${t("vocab_title")}</h2>` +
    '<div class="vocab-form">' +
    `<label><span data-i18n="vocab_search">${t("vocab_search")}</span>` +
    `<input id="vocab-q" type="search" spellcheck="false" autocomplete="off" data-i18n-placeholder="vocab_placeholder" placeholder="${t("vocab_placeholder")}"></label>` +
    `<select id="vocab-match"><option value="prefix" data-i18n="vocab_prefix">${t("vocab_prefix")}</option>` +
    `<option value="substring" data-i18n="vocab_substring">${t("vocab_substring")}</option></select>` +
    `<select id="vocab-kind"><option value="" data-i18n="vocab_all">${t("vocab_all")}</option>${kinds}</select></div>` +
    '<p id="vocab-summary" class="vocab-summary"></p><p id="vocab-error" class="error" role="alert" hidden></p>' +
    '<p id="vocab-note" class="note" hidden></p>' +
    '<ol id="vocab-list" class="vocab-list" data-ready="0"></ol>' +
    `<button id="vocab-more" type="button" hidden data-i18n="vocab_more">${t("vocab_more")}</button>` +
    '<p id="vocab-caption" class="caption"></p>';
  $("#vocab-q").addEventListener("input", () => { clearTimeout(VOCAB.timer); VOCAB.timer = setTimeout(() => vocabFetch(0), VOCAB_WAIT); });
  $("#vocab-match").addEventListener("change", () => vocabFetch(0));
  $("#vocab-kind").addEventListener("change", () => vocabFetch(0));
  $("#vocab-more").addEventListener("click", () => vocabFetch(VOCAB.rows.length));
  $("#vocab-list").addEventListener("click", (e) => {
    const b = e.target.closest("button.vtok");
    if (b && !b.disabled) vocabAppend(VOCAB.rows[+b.dataset.n].text);
  });
}

/** Ask for the tokens matching the form, from `offset` (0: a new list; more: appended). Newest answer wins. */
async function vocabFetch(offset) {
  if (VOCAB.off) return;
  const q = new URLSearchParams({ query: $("#vocab-q").value, match: $("#vocab-match").value, limit: String(VOCAB_PAGE),
    offset: String(offset) });
  if ($("#vocab-kind").value) q.set("kind", $("#vocab-kind").value);
  const req = ++VOCAB.req;
  try {
    const doc = await api("api/vocab?" + q.toString());
    if (req !== VOCAB.req) return;
    VOCAB.doc = doc;
    VOCAB.rows = offset ? VOCAB.rows.concat(doc.tokens) : doc.tokens;
    $("#vocab-error").hidden = true;
    vocabShow(offset);
  } catch (e) {
    if (req !== VOCAB.req) return;
    $("#vocab-error").textContent = e.message; $("#vocab-error").hidden = false;
  }
}

function vocabRow(r, n) {
  const title = r.text === null ? t("vocab_untyped") : `#${r.id}`;
  return `<li><button type="button" class="vtok" data-n="${n}" data-id="${r.id}" data-kind="${r.kind}"` +
    `${r.text === null ? " disabled" : ""} title="${esc(title)}"><span class="vt">${esc(r.token)}</span>` +
    `<span class="vk">${esc(t("vocab_one_" + r.kind))}</span>` +
    `<span class="vc num" data-count="${r.count === null ? "" : r.count}">${r.count === null ? "—" : r.count.toLocaleString("en-US")}</span></button></li>`;
}

function vocabShow(from = 0) {
  const d = VOCAB.doc, list = $("#vocab-list");
  if (!d) return;
  const html = VOCAB.rows.slice(from).map((r, k) => vocabRow(r, from + k)).join("");
  if (from) list.insertAdjacentHTML("beforeend", html); else list.innerHTML = html || `<li class="vnone">${t("vocab_none")}</li>`;
  $("#vocab-more").hidden = VOCAB.rows.length >= d.matches;
  vocabText();
  list.dataset.ready = String(Number(list.dataset.ready || 0) + 1);
}

/** The lines that depend on the language: the summary and the caption. */
function vocabText() {
  const d = VOCAB.doc;
  if (!d) return;
  const parts = Object.entries(d.kinds).map(([k, n]) => `${n.toLocaleString("en-US")} ${t("vocab_kind_" + k)}`).join(", ");
  $("#vocab-summary").textContent = t("vocab_summary", { n: d.matches, size: d.size, shown: VOCAB.rows.length }) + " " +
    t("vocab_kinds", { parts });
  $("#vocab-caption").innerHTML = d.counted ? t("vocab_counted", { src: TEXTS[d.counted_from] ? t(TEXTS[d.counted_from]) : esc(d.counted_from), total: d.total_count.toLocaleString("en-US") })
    : t("vocab_uncounted", { why: esc(d.counted_from) });
  for (const el of document.querySelectorAll("#vocab-list .vk")) el.textContent = t("vocab_one_" + el.parentElement.dataset.kind);
}

/** Add `word` to the end of the text box: after a space when the model's words are separated by spaces. */
function vocabAppend(word) {
  const box = $("#text"), text = box.value, m = model();
  const spaced = !m || m.tokenizer !== "char";
  box.value = text + (text && spaced && !/\s$/.test(text) ? " " : "") + word;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  box.focus();
}

register({
  name: "vocab",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() { vocabBuild(); },
  keep: formKeep({ q: "#vocab-q", match: "#vocab-match", kind: "#vocab-kind" }, () => vocabFetch(0)),  // address.js
  onDoc() {
    if (S.mode === "live" && !VOCAB.doc && !VOCAB.req) vocabFetch(0);
  },
  render(what) {
    if (what !== "init" || VOCAB.doc || VOCAB.req) return;
    if (S.mode === "static") {
      VOCAB.off = true;
      for (const id of ["#vocab-q", "#vocab-match", "#vocab-kind"]) $(id).disabled = true;
      const note = $("#vocab-note");
      note.innerHTML = t("vocab_static"); note.dataset.key = "vocab_static"; note.hidden = false;
    } else {
      vocabFetch(0);  // a model with no example sentence has no first document: list anyway
    }
  },
  lang() {
    vocabText();
    const note = $("#vocab-note");
    if (note.dataset.key) note.innerHTML = t(note.dataset.key);
  },
});
