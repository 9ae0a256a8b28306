// A card as a picture, drawn by the page itself (no library, nothing fetched): what save_card.js saves.
//   canvasPicture  a card drawn on one canvas (heatmap, lines): the canvas redrawn at SCALE× the device
//                  pixel ratio (paint.js PRINT), its title drawn above it, on white
//   svgFile        a card drawn as SVG (the hull): the figure as a self-contained SVG file, every style it
//                  takes from the page's stylesheets written on its elements (fonts named as the page
//                  names them), its title above it; svgPicture rasterises that file at SCALE×
//   htmlPicture    any other card (tables, bars, forms, the heads' grid): the card cloned with its
//                  computed styles inlined, its canvases replaced by their pixels (<img> of a data: URL),
//                  serialized as XHTML inside an SVG <foreignObject>, and that SVG drawn on a canvas.
// The last is the one a browser may refuse: drawing an SVG image that holds a <foreignObject> marks
// the canvas "tainted" in Safari (WebKit), and toBlob then throws a SecurityError; Chromium and Firefox
// draw it and let it be read (the page's data: URLs only, no other origin). save_card.js catches the
// refusal, and the button then says that this browser will not make the picture (i18n cards_refused).
// Pseudo-elements (::before, ::after) are not part of the clone, so what they add is not in the picture.

import { S } from "./state.js";
import { FONT, PRINT, fit } from "./paint.js";

export const SCALE = 2;  // pixels per CSS pixel in a saved picture, times the device pixel ratio
const BAND = 30;  // the title's band above a figure, CSS pixels
const SVG_NS = "http://www.w3.org/2000/svg";

/** Pixels per CSS pixel of a saved picture: SCALE × the device pixel ratio. */
export const ratio = () => SCALE * (window.devicePixelRatio || 1);

/** A canvas of w×h CSS pixels at `k` pixels each, white, with `title` in the band at its top. */
function sheet(w, h, k, title) {
  const out = document.createElement("canvas");
  out.width = Math.round(w * k); out.height = Math.round(h * k);
  const ctx = out.getContext("2d");
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, out.width, out.height);
  ctx.setTransform(k, 0, 0, k, 0, 0);
  ctx.font = `600 15px ${FONT}`; ctx.fillStyle = "#1f2937"; ctx.textBaseline = "middle"; ctx.textAlign = "left";
  ctx.fillText(fit(ctx, title, w - 16), 8, BAND / 2);
  return { out, ctx };
}

/** The canvas `cv`, redrawn by `draw` at SCALE× its pixels, under `title`: a new canvas, BAND×k pixels taller.
 *  The page's canvas is drawn again at its own size afterwards. */
export function canvasPicture(cv, draw, title) {
  const was = PRINT.scale;  // (presentation mode draws at its zoom: present.js)
  PRINT.scale = SCALE;
  try {
    draw();
    const k = cv.width / (parseFloat(cv.style.width) || cv.width);
    const { out, ctx } = sheet(cv.width / k, BAND + cv.height / k, k, title);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(cv, 0, out.height - cv.height);
    return out;
  } finally {
    PRINT.scale = was;
    draw();
  }
}

// what an SVG figure takes from the stylesheets (app.css: #hull .pt text { font-size: 12px; ... })
const SVG_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
  "stroke-linecap", "stroke-linejoin", "opacity", "font-family", "font-size", "font-weight", "font-style",
  "text-anchor", "dominant-baseline", "paint-order", "visibility"];
// what an HTML card's look needs (the rest are the browser's defaults, or do not show in a still picture)
const HTML_PROPS = ["display", "box-sizing", "width", "height", "min-width", "max-width", "min-height", "max-height",
  "margin-top", "margin-right", "margin-bottom", "margin-left", "padding-top", "padding-right", "padding-bottom",
  "padding-left", "border-top-width", "border-right-width", "border-bottom-width", "border-left-width",
  "border-top-style", "border-right-style", "border-bottom-style", "border-left-style", "border-top-color",
  "border-right-color", "border-bottom-color", "border-left-color", "border-top-left-radius",
  "border-top-right-radius", "border-bottom-left-radius", "border-bottom-right-radius", "background-color",
  "background-image", "box-shadow", "position", "top", "right", "bottom", "left", "z-index", "float", "clear",
  "overflow-x", "overflow-y", "flex-direction", "flex-wrap", "flex-grow", "flex-shrink", "flex-basis",
  "justify-content", "justify-items", "align-items", "align-self", "align-content", "justify-self", "row-gap",
  "column-gap", "order", "grid-template-columns", "grid-template-rows", "grid-template-areas", "grid-area",
  "grid-auto-flow", "grid-auto-columns", "grid-auto-rows", "table-layout", "border-collapse", "border-spacing",
  "vertical-align", "opacity", "transform", "text-decoration-line", "text-decoration-color", "text-overflow",
  "object-fit", ...SVG_PROPS];
// inherited: written only where they differ from the parent's
const INHERITED = ["color", "font-family", "font-size", "font-weight", "font-style", "line-height", "letter-spacing",
  "text-align", "text-transform", "white-space", "word-break", "overflow-wrap", "list-style-type", "writing-mode",
  "font-variant-numeric", "tab-size", "visibility"];

/** Each element of `copy` gets the computed style of its twin in `orig` (same tree) in its style attribute. */
function inlineStyles(orig, copy, props, parent = null) {
  const cs = getComputedStyle(orig);
  let css = "";
  for (const p of props) css += `${p}:${cs.getPropertyValue(p)};`;
  for (const p of INHERITED) {
    const v = cs.getPropertyValue(p);
    if (!parent || parent.getPropertyValue(p) !== v) css += `${p}:${v};`;
  }
  copy.setAttribute("style", css);
  const a = orig.children, b = copy.children;
  for (let n = 0; n < a.length && n < b.length; n++) inlineStyles(a[n], b[n], props, cs);
}

/** The card's SVG figure `svg` as the text of a self-contained SVG file, `title` above it. */
export function svgFile(svg, title) {
  const copy = svg.cloneNode(true);
  inlineStyles(svg, copy, SVG_PROPS);
  const vb = svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width ? svg.viewBox.baseVal
    : { x: 0, y: 0, width: svg.clientWidth, height: svg.clientHeight };
  const w = vb.width, h = vb.height + BAND, root = document.createElementNS(SVG_NS, "svg");
  root.setAttribute("xmlns", SVG_NS);
  root.setAttribute("viewBox", `${vb.x} ${vb.y - BAND} ${w} ${h}`);
  root.setAttribute("width", String(w)); root.setAttribute("height", String(h));
  const el = (name, attrs, text) => {
    const e = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return root.appendChild(e);
  };
  el("title", {}, title);
  el("rect", { x: vb.x, y: vb.y - BAND, width: w, height: h, fill: "#fff" });
  el("text", { x: vb.x + 8, y: vb.y - BAND / 2, "dominant-baseline": "middle", style:
    `font: 600 15px ${getComputedStyle(svg).fontFamily || FONT}; fill: #1f2937;` }, title);
  copy.removeAttribute("viewBox");
  for (const a of ["width", "height", "style", "role", "aria-label"]) copy.removeAttribute(a);
  copy.setAttribute("x", vb.x); copy.setAttribute("y", vb.y);
  copy.setAttribute("width", vb.width); copy.setAttribute("height", vb.height);
  copy.setAttribute("viewBox", `${vb.x} ${vb.y} ${vb.width} ${vb.height}`);
  root.appendChild(copy);
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(root);
}

/** An image of the SVG text `svg` (a data: URL: nothing fetched, allowed by the page's img-src). */
function svgImage(svg) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error("svg image"));
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
  });
}

/** The SVG file `text` (w×h CSS pixels) drawn at ratio() pixels each: a canvas. */
export async function svgPicture(text, w, h) {
  const img = await svgImage(text), k = ratio(), out = document.createElement("canvas");
  out.width = Math.round(w * k); out.height = Math.round(h * k);
  const ctx = out.getContext("2d");
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(img, 0, 0, out.width, out.height);
  return out;
}

/** The card cloned for a picture: styles inlined, canvases as images, typed values kept, `skip` removed. */
function cloneCard(card, skip) {
  const copy = card.cloneNode(true);
  inlineStyles(card, copy, HTML_PROPS, getComputedStyle(card.parentElement || card));
  const cvs = card.querySelectorAll("canvas"), copies = copy.querySelectorAll("canvas");
  cvs.forEach((cv, n) => {
    const img = document.createElement("img");
    img.setAttribute("style", copies[n].getAttribute("style") || "");
    try { img.src = cv.width && cv.height ? cv.toDataURL("image/png") : ""; } catch (e) { img.alt = ""; }
    copies[n].replaceWith(img);
  });
  const fields = card.querySelectorAll("input, textarea, select"), copied = copy.querySelectorAll("input, textarea, select");
  fields.forEach((f, n) => {
    const c = copied[n];
    if (f.tagName === "TEXTAREA") c.textContent = f.value;
    else if (f.tagName === "SELECT") [...c.options].forEach((o, m) => { if (m === f.selectedIndex) o.setAttribute("selected", ""); else o.removeAttribute("selected"); });
    else if (f.type === "checkbox" || f.type === "radio") { if (f.checked) c.setAttribute("checked", ""); else c.removeAttribute("checked"); }
    else c.setAttribute("value", f.value);
  });
  for (const e of copy.querySelectorAll(skip)) e.remove();
  for (const e of copy.querySelectorAll("script")) e.remove();
  copy.style.margin = "0";
  return copy;
}

/** The card `card` drawn as it shows on the page (see the module's note): a canvas at ratio() pixels per
 *  CSS pixel, or a rejected promise where the browser refuses to draw it. `skip`: what to leave out. */
export async function htmlPicture(card, skip) {
  const r = card.getBoundingClientRect(), w = Math.ceil(r.width), h = Math.ceil(r.height);
  const copy = cloneCard(card, skip);
  const body = new XMLSerializer().serializeToString(copy);
  const lang = S.lang === "zh" ? "zh-CN" : "en";
  const svg = `<svg xmlns="${SVG_NS}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<foreignObject x="0" y="0" width="${w}" height="${h}"><div xmlns="http://www.w3.org/1999/xhtml" lang="${lang}" ` +
    `style="width:${w}px;height:${h}px;overflow:hidden;background:#fff">${body}</div></foreignObject></svg>`;
  return svgPicture(svg, w, h);
}

/** The canvas's PNG bytes (a Blob); rejects where the canvas is tainted (the browser refused to draw). */
export function pngBlob(cv) {
  return new Promise((resolve, reject) => {
    try {
      cv.toBlob((b) => (b ? resolve(b) : reject(new Error("empty picture"))), "image/png");
    } catch (e) {
      reject(e);
    }
  });
}
