#!/usr/bin/env bash
# Installs the peer for the optional Portkey scenario of `bun run bench`, OUTSIDE the repository:
# Portkey's open-source gateway from npm, in ${PORTKEY_DIR:-$TMPDIR/portkey-peer}.
# @hono/node-server is pinned to 1.13.8 (npm overrides): with newer versions every stream fails on Bun.
set -euo pipefail
DIR="${PORTKEY_DIR:-${TMPDIR:-/tmp}/portkey-peer}"
VERSION="${PORTKEY_VERSION:-1.15.2}"
mkdir -p "$DIR"
cd "$DIR"
cat > package.json <<JSON
{
  "name": "portkey-peer",
  "private": true,
  "dependencies": { "@portkey-ai/gateway": "$VERSION" },
  "overrides": { "@hono/node-server": "1.13.8" }
}
JSON
npm install --no-audit --no-fund
echo "Portkey gateway $VERSION installed in $DIR; bun run bench will include it."
