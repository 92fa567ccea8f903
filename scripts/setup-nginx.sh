#!/bin/sh
# Installs nginx (Debian package) for test/nginx.test.ts, which runs the service behind a real
# reverse proxy. Only the binary is used: the test writes its own configuration and runs nginx in
# the foreground on a loopback port; the package's own service is not started (policy-rc.d).
# Exits 0 when it cannot install (no root, no network): the test then skips, saying so.
set -u

found=$(command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)
if [ -n "$found" ]; then
  echo "setup-nginx: $found is present ($("$found" -v 2>&1))"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-nginx: apt-get not found; install nginx yourself (test/nginx.test.ts skips until then)"
  exit 0
fi

SUDO=''
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO='sudo -n'
  else
    echo "setup-nginx: not root and no passwordless sudo; run 'apt-get install -y nginx-light' or 'nginx' as root (test/nginx.test.ts skips until then)"
    exit 0
  fi
fi

LOG="${TMPDIR:-/tmp}/setup-nginx-apt.log"
# Keep the package's init script from starting a system nginx on port 80 during install.
POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=''
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null && $SUDO chmod +x "$POLICY" && CREATED_POLICY=1
fi
echo "setup-nginx: installing the Debian nginx package (apt output in $LOG)"
if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$LOG" 2>&1 && \
   $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >>"$LOG" 2>&1 && \
   [ -x /usr/sbin/nginx ]; then
  echo "setup-nginx: installed $(/usr/sbin/nginx -v 2>&1)"
else
  tail -n 5 "$LOG" 2>/dev/null
  echo "setup-nginx: apt-get could not install nginx (offline?); test/nginx.test.ts will skip"
fi
[ -n "$CREATED_POLICY" ] && $SUDO rm -f "$POLICY"
exit 0
