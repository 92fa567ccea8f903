#!/bin/sh
# Installs headless Chromium (Debian package) for test/browser.test.ts. playwright-core drives it
# through /usr/bin/chromium; it does not download browsers of its own. Exits 0 when it cannot
# install (no root, no network): the browser test then skips with a message saying so.
set -u

if [ -x /usr/bin/chromium ]; then
  echo "setup-browser: /usr/bin/chromium is present ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-browser: apt-get not found; install Chromium yourself at /usr/bin/chromium (test/browser.test.ts skips until then)"
  exit 0
fi

SUDO=''
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO='sudo -n'
  else
    echo "setup-browser: not root and no passwordless sudo; run 'apt-get install -y chromium' as root (test/browser.test.ts skips until then)"
    exit 0
  fi
fi

LOG="${TMPDIR:-/tmp}/setup-browser-apt.log"
echo "setup-browser: installing the Debian chromium package (apt output in $LOG)"
if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$LOG" 2>&1 && \
   $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >>"$LOG" 2>&1 && \
   [ -x /usr/bin/chromium ]; then
  echo "setup-browser: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
else
  tail -n 5 "$LOG" 2>/dev/null
  echo "setup-browser: apt-get could not install chromium (offline?); test/browser.test.ts will skip"
fi
exit 0
