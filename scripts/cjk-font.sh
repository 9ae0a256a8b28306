#!/bin/sh
# Figures label Chinese tokens, so they need a font with CJK glyphs (Debian: fonts-noto-cjk).
# Installs it when it is missing and we may (root with apt-get); otherwise says what to install.
if fc-list :lang=zh 2>/dev/null | grep -q .; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing fonts-noto-cjk (a font that can draw Chinese, for figures)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null
else
    echo "note: no CJK font found; figures with Chinese labels need one, e.g. apt-get install fonts-noto-cjk" >&2
fi
exit 0
