// qkv.show's front end in a notebook (anywidget loads it; qkv.apps.notebook.show inlines it beside
// its text/html). Not a module of the page: main.js never imports it, so the page's bundle leaves it out.
// Each view is the explorer page in an iframe of its own (srcdoc: the page, data inside; sandbox:
// scripts and downloads only): the page finds its elements by global ids and keeps module-level
// state, so two views in one notebook document would draw into each other; an iframe each keeps them
// apart. This module only makes the iframe, tells the page the notebook's theme (data-theme on <html>:
// in the srcdoc before the page runs, then by message) and sizes the iframe to the height the page posts.

const MAX_HEIGHT = 40000;  // px: a page taller than this scrolls inside its iframe
const FIRST_HEIGHT = 900;  // px: until the page has said its height
const SANDBOX = "allow-scripts allow-downloads";

/** [r, g, b] of a CSS colour as the browser computes it ("rgb(1, 2, 3)"), or null when it is (nearly) transparent. */
function parseRgb(css) {
  const m = /rgba?\(([^)]+)\)/.exec(css || "");
  if (!m) return null;
  const parts = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
  if (parts.length >= 4 && parts[3] < 0.5) return null;
  return parts.slice(0, 3);
}

/** A colour written any way CSS allows (#111, white, var's text), resolved by the browser next to `host`. */
function rgbOf(value, host) {
  const probe = document.createElement("span");
  probe.style.color = value;
  if (!probe.style.color) return null;
  host.appendChild(probe);
  const rgb = parseRgb(getComputedStyle(probe).color);
  probe.remove();
  return rgb;
}

/** The first opaque background from `host` up to the root, or null. */
function behind(host) {
  for (let n = host; n; n = n.parentElement) {
    const rgb = parseRgb(getComputedStyle(n).backgroundColor);
    if (rgb) return rgb;
  }
  return null;
}

/** Relative luminance (sRGB): 0.2126 R + 0.7152 G + 0.0722 B of the linearised channels. */
function luminance([r, g, b]) {
  const lin = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** "dark" or "light": JupyterLab's body[data-jp-theme-light], VS Code's body classes, else the
 *  luminance of JupyterLab's --jp-layout-color0 or of the background behind the view, else the system's. */
function themeOf(host) {
  const body = document.body, jp = body.dataset.jpThemeLight, c = body.classList;
  if (jp === "true" || jp === "false") return jp === "true" ? "light" : "dark";
  if (c.contains("vscode-light") || c.contains("vscode-high-contrast-light")) return "light";
  if (c.contains("vscode-dark") || c.contains("vscode-high-contrast")) return "dark";
  const jpColor = getComputedStyle(document.documentElement).getPropertyValue("--jp-layout-color0").trim();
  const rgb = (jpColor && rgbOf(jpColor, host)) || behind(host);
  if (rgb) return luminance(rgb) < 0.2 ? "dark" : "light";
  return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** The page with data-theme on its <html>, so its stylesheet picks the theme before anything is drawn. */
function themed(page, theme) {
  return page.replace(/<html\b/i, `<html data-theme="${theme}"`);
}

/** Show page() in `frame` in the notebook's theme and size `sized` to the height the page posts. The
 *  widget's page starts in the theme (data-theme in its srcdoc); the page is told the theme again (a
 *  message its notebook script reads: qkv.apps.notebook.show) after each height it posts and whenever
 *  the notebook's theme changes, with no reload: its drawings keep their light paper, so nothing is
 *  redrawn. `written`: whether the srcdoc is still to be written. Returns { reload, stop }. */
function follow(frame, page, sized, host, written) {
  let theme = themeOf(host);
  const tell = () => { if (frame.contentWindow) frame.contentWindow.postMessage({ qkv: "theme", theme }, "*"); };
  const onMessage = (e) => {
    if (e.source !== frame.contentWindow || !e.data || e.data.qkv !== "height") return;
    const h = Number(e.data.height);
    if (Number.isFinite(h) && h > 0) sized.style.height = `${Math.min(MAX_HEIGHT, Math.ceil(h))}px`;
    tell();
  };
  window.addEventListener("message", onMessage);
  const watch = new MutationObserver(() => { const now = themeOf(host); if (now !== theme) { theme = now; tell(); } });
  watch.observe(document.body, { attributes: true, attributeFilter: ["class", "style", "data-jp-theme-light"] });
  const reload = () => { frame.srcdoc = themed(page(), theme); };
  if (!written) reload();
  return { reload, stop: () => { window.removeEventListener("message", onMessage); watch.disconnect(); } };
}

/** anywidget's view: an iframe in `el`, its page the model's "page". */
function render({ model, el }) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", SANDBOX);
  frame.title = model.get("title") || "qkv";
  frame.style.cssText = `display:block;width:100%;height:${FIRST_HEIGHT}px;border:0;background:transparent`;
  el.appendChild(frame);
  const view = follow(frame, () => model.get("page"), frame, el, false);
  const reload = () => view.reload();
  model.on("change:page", reload);
  return () => { view.stop(); if (model.off) model.off("change:page", reload); };
}

/** The text/html fallback's iframe (its srcdoc written already): the theme and the height. */
function adopt(box) {
  const frame = box.querySelector("iframe");
  if (!frame) return null;
  const page = frame.getAttribute("srcdoc");
  return follow(frame, () => page, box, box, true);
}

export default { render, adopt };
