#!/usr/bin/env bash
# Prepares a fresh Debian or Ubuntu machine for baton: installs with apt-get only what is missing
# (redis-server for the tests and `npm start`, git for the fingerprint tests, chromium for the
# dashboard browser test), using sudo only when not root, then installs the npm dependencies
# (`npm ci`; Bun and Deno come along as dev dependencies) and builds dist/ (`npm run build`).
#
#   bash scripts/setup.sh            # from anywhere; it works in the checkout it belongs to
#   BATON_SETUP_SKIP_NPM=1 bash scripts/setup.sh   # system packages only
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }
fail() { printf 'setup: %s\n' "$*" >&2; exit 1; }

if ! command -v node >/dev/null 2>&1 || ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  fail "baton needs Node >= 20 and npm (found: $(node --version 2>/dev/null || echo none)); install them first, e.g. from https://nodejs.org/ or NodeSource"
fi

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v git >/dev/null 2>&1 || missing+=(git)
# The team tests (test/teams): redis-cli builds a Redis Cluster, openssl makes a CA for TLS,
# unshare (util-linux) gives each simulated machine its own mount namespace.
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
# The real-client tests (test/agents) bring up loopback in a private network namespace with ip.
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
# The dashboard test drives Debian's chromium at this path (playwright-core, no downloaded browser).
[ -x /usr/bin/chromium ] || missing+=(chromium)

if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || fail "missing: ${missing[*]}; this script installs them with apt-get (Debian/Ubuntu); install them another way"
  if [ "$(id -u)" = 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    fail "missing: ${missing[*]}; run this script as root, or install sudo"
  fi
  say "installing ${missing[*]}${as_root[0]:+ (with sudo)}"
  ${as_root[@]+"${as_root[@]}"} apt-get update -qq
  ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "redis-server, redis-cli, git, openssl, unshare and chromium are installed"
fi

if [ "${BATON_SETUP_SKIP_NPM:-}" != 1 ]; then
  say "npm ci"
  npm ci --no-audit --no-fund
  say "npm run build"
  npm run build --silent
fi
say "done: run 'npm start' to watch baton drive a task (a demo; its dashboard stays open), 'npm test' for the tests"
