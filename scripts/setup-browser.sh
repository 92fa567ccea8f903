#!/bin/sh
# Installs headless Chromium (Debian package) for test/auth/browser.test.ts and test/ops/first-run.test.ts. playwright-core drives it
# through /usr/bin/chromium; it does not download browsers of its own. Exits 0 when it cannot
# install (no root, no network): the browser test then skips with a message saying so.
set -u
. "$(dirname "$0")/lib/debian-package.sh"

if [ -x /usr/bin/chromium ]; then
  echo "setup-browser: /usr/bin/chromium is present ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

debian_install setup-browser chromium /usr/bin/chromium test/auth/browser.test.ts
exit 0
