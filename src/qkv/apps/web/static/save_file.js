// Saving a file from the page (a card's picture: save_card.js; the exported view: address.js), and the
// name it gets: what it is, the text's first words, the layer and head (qkv-heatmap-我投资了苹果-L2H1.png).

import { S } from "./state.js";

const UNSAFE = /[\\/:*?"<>|#%&{}$!'@`=+,;^~[\]]+/g;  // characters a file system or a shell may refuse
const WORDS = 24;  // characters of the text kept in a name at most, cut where a word ends

/** The text's first words as part of a file name, cut at a word's end where it has any. */
function textPart() {
  const text = (S.typed || (S.doc && S.doc.text) || "").replace(UNSAFE, "").trim();
  // a space between two Latin letters or digits becomes "_" (I_ate); any other goes (我投资了苹果)
  const chars = [...text.replace(/(?<=[A-Za-z0-9])\s+(?=[A-Za-z0-9])/g, "_").replace(/\s+/g, "")];
  if (chars.length <= WORDS) return chars.join("");
  const cut = chars.slice(0, WORDS + 1).join("");
  const end = cut.lastIndexOf("_");
  return end > 0 ? cut.slice(0, end) : chars.slice(0, WORDS).join("");
}

/** qkv-WHAT-TEXT-L{layer}H{head}.EXT: what the file holds, on which text, layer and head. */
export function fileName(what, ext) {
  const parts = ["qkv", what];
  const text = textPart();
  if (text) parts.push(text);
  if (S.doc) parts.push(`L${S.layer}H${S.head}`);
  return `${parts.join("-")}.${ext}`;
}

/** Save `blob` as a file called `name` (a hidden link with download, clicked; nothing is fetched). */
export function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob); a.download = name; a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}
