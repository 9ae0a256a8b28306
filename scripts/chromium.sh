#!/bin/sh
# The browser tests drive Debian's Chromium (/usr/bin/chromium) with Playwright; no browser is ever
# downloaded by a tool. Installs the package when it is missing and we may (root with apt-get).
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (Debian's package, for the explorer's browser tests)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
    echo "note: /usr/bin/chromium not found; the browser tests will be skipped (apt-get install chromium)" >&2
fi
exit 0
