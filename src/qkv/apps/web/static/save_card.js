// A save control on every card's title row (top right): the card as a PNG picture for slides, and a card
// drawn as SVG (the hull) as an SVG file too. How each kind of card is drawn: card_picture.js. The files
// are made in the page and handed to the browser as a download (an <a download> of a blob: URL): nothing
// is fetched, so it works the same on `qkv serve`, in the static export and offline. A file's name says
// the card, the text's first characters and the layer and head: qkv-heatmap-我投资了苹果-L0H1.png.
// The panels redraw their cards whole (innerHTML): a MutationObserver puts the control back each time.

import { S } from "./state.js";
import { $ } from "./util.js";
import { download, fileName as named } from "./save_file.js";
import { t } from "./i18n.js";
import { drawHeatmap } from "./heatmap.js";
import { drawLines } from "./lines.js";
import { canvasPicture, htmlPicture, pngBlob, svgFile, svgPicture } from "./card_picture.js";

const CONTROL = "card-save";
// the cards drawn on one canvas (saved as the canvas's own pixels) and those drawn as one SVG figure
const CANVAS = { "heatmap-card": ["#heatmap", drawHeatmap], "lines-card": ["#lines", drawLines] };
const SVG = { "hull-card": "#hull svg" };
// the title of a card that has no <h2> of its own
const UNTITLED = { input: "cards_input_title", heads: "cards_heads_title" };

/** The card's short name: its id, else its class NAME-card ("heatmap"). */
export function cardName(card) {
  if (card.id) return card.id;
  const m = [...card.classList].map((c) => /^(.+)-card$/.exec(c)).find(Boolean);
  return m ? m[1] : "card";
}

const kindOf = (card) => Object.keys(CANVAS).find((c) => card.classList.contains(c));
const svgOf = (card) => Object.keys(SVG).find((c) => card.classList.contains(c));

/** What the card is, in words, for the picture's title. */
export function cardTitle(card) {
  const h = card.querySelector("h2");
  const own = h && h.textContent.trim();
  if (own) return own;
  const key = UNTITLED[cardName(card)];
  return key ? t(key, { l: S.layer, h: S.head }) : cardName(card);
}

/** The file a card is saved as (save_file.js: the card, the text, the layer and head). */
const cardFile = (card, ext) => named(cardName(card), ext);

/** The card's picture as a canvas, by its kind (card_picture.js). */
async function picture(card) {
  const kind = kindOf(card), svg = svgOf(card);
  if (kind && S.doc) {
    const [sel, draw] = CANVAS[kind];
    return canvasPicture($(sel), draw, cardTitle(card));
  }
  const fig = svg && card.querySelector(SVG[svg]);
  if (fig) {
    const text = svgFile(fig, cardTitle(card)), root = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    return svgPicture(text, +root.getAttribute("width"), +root.getAttribute("height"));
  }
  return htmlPicture(card, "." + CONTROL);
}

/** One button's click: make the file, then say what became of it on the button (its state and title). */
async function save(card, button) {
  const format = button.dataset.format;
  button.dataset.state = "busy"; button.disabled = true;
  try {
    if (format === "svg") {
      const fig = card.querySelector(SVG[svgOf(card)]);
      download(new Blob([svgFile(fig, cardTitle(card))], { type: "image/svg+xml" }), cardFile(card, "svg"));
    } else {
      download(await pngBlob(await picture(card)), cardFile(card, "png"));
    }
    button.dataset.state = "saved";
    button.title = t("cards_saved", { name: cardFile(card, format) });
  } catch (e) {
    button.dataset.state = "refused";
    // a tainted canvas (card_picture.js) is the browser's refusal; anything else is said as it is
    button.title = e && e.name === "SecurityError" ? t("cards_refused") : t("cards_failed", { error: String((e && e.message) || e) });
  } finally {
    button.disabled = false;
  }
}

function control(card) {
  const box = document.createElement("span");
  box.className = CONTROL;
  const formats = svgOf(card) ? ["png", "svg"] : ["png"];
  for (const f of formats) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "card-save-btn"; b.dataset.format = f;
    b.dataset.label = f.toUpperCase(); b.dataset.i18nTitle = `cards_save_${f}`; b.title = t(`cards_save_${f}`);
    b.setAttribute("aria-label", `${f.toUpperCase()}: ${t(`cards_save_${f}`)}`);
    b.addEventListener("click", () => save(card, b));
    box.appendChild(b);
  }
  return box;
}

/** Put the control on the card unless it holds one (a panel that redrew the card took it away). */
function equip(card) {
  if (!card.querySelector(`:scope > .${CONTROL}`)) card.insertBefore(control(card), card.firstChild);
}

/** The labels of every control in the page's language (after a language switch, which sets <html lang>). */
function relabel() {
  for (const b of document.querySelectorAll(".card-save-btn")) {
    b.setAttribute("aria-label", `${b.dataset.label}: ${t(b.dataset.i18nTitle)}`);
    if (b.dataset.state !== "refused") b.title = t(b.dataset.i18nTitle);
  }
}

/** A save control on every card, now and whenever a panel redraws its card. */
export function equipCards() {
  new MutationObserver(relabel).observe(document.documentElement, { attributes: true, attributeFilter: ["lang"] });
  const cards = document.querySelectorAll("main.grid > section.card");
  const watch = new MutationObserver((records) => { for (const r of records) equip(r.target); });
  for (const card of cards) { equip(card); watch.observe(card, { childList: true }); }
}
