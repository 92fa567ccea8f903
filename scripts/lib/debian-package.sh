# Sourced by scripts/setup-*.sh: installs one Debian package for an end-to-end test, or says why
# not and returns 0 anyway (no apt-get, not root without passwordless sudo, offline) so that the
# test skips with a message instead of the setup failing.
#
#   debian_install <tag> <package> <binary> <test file>
#
# Sets SUDO ('' or 'sudo -n') for the caller; returns 1 only when it did not try to install.

debian_sudo () {
  SUDO=''
  [ "$(id -u)" -eq 0 ] && return 0
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO='sudo -n'
    return 0
  fi
  return 1
}

debian_install () {
  tag=$1 package=$2 binary=$3 test=$4
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$tag: apt-get not found; install $package yourself ($test skips until then)"
    return 1
  fi
  if ! debian_sudo; then
    echo "$tag: not root and no passwordless sudo; run 'apt-get install -y $package' as root ($test skips until then)"
    return 1
  fi
  log="${TMPDIR:-/tmp}/$tag-apt.log"
  echo "$tag: installing the Debian $package package (apt output in $log)"
  if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 && \
     $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >>"$log" 2>&1 && \
     [ -x "$binary" ]; then
    echo "$tag: installed $({ "$binary" --version 2>/dev/null || "$binary" -v 2>&1; } | head -n 1)"
  else
    tail -n 5 "$log" 2>/dev/null
    echo "$tag: apt-get could not install $package (offline?); $test will skip"
  fi
  return 0
}
