#!/bin/sh
# Installs nginx (Debian package) for test/ops/nginx.test.ts, which runs the service behind a real
# reverse proxy. Only the binary is used: the test writes its own configuration and runs nginx in
# the foreground on a loopback port; the package's own service is not started (policy-rc.d).
# Exits 0 when it cannot install (no root, no network): the test then skips, saying so.
set -u
. "$(dirname "$0")/lib/debian-package.sh"

found=$(command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)
if [ -n "$found" ]; then
  echo "setup-nginx: $found is present ($("$found" -v 2>&1))"
  exit 0
fi

# Keep the package's init script from starting a system nginx on port 80 during install.
POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=''
if debian_sudo && [ ! -e "$POLICY" ] && command -v apt-get >/dev/null 2>&1; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null && $SUDO chmod +x "$POLICY" && CREATED_POLICY=1
fi
debian_install setup-nginx nginx /usr/sbin/nginx test/ops/nginx.test.ts
[ -n "$CREATED_POLICY" ] && $SUDO rm -f "$POLICY"
exit 0
