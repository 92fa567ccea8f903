#!/bin/sh
# python3 for test/closed-terminal.test.ts, which runs the service on a real pseudo-terminal with
# Python's standard pty module. Debian's python3 package; nothing else is downloaded.
set -eu
if command -v python3 >/dev/null 2>&1 && python3 -c 'import pty' 2>/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 >/dev/null
python3 -c 'import pty'
