#!/usr/bin/env bash
# Installs the official `openai` npm SDK (version pinned) into .cache/node/node_modules for the
# integration test (tests/server/openai_sdk_test.mjs). Idempotent: does nothing when the
# pinned version is already there. Called by scripts/deps.sh; needs npm and the registry.
#
# 6.x, not the newest 7.x: 7.x declares engines node >= 22, and the machines run Node 20
# (Debian's nodejs is 18); 6.30.1 declares no engine limit and has no dependencies.
set -euo pipefail

VERSION="6.30.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.cache/node"
PKG="$DEST/node_modules/openai/package.json"

if [ -f "$PKG" ] && [ "$(node -p "require('$PKG').version" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "install_node_sdk: openai@$VERSION -> ${DEST#"$ROOT"/}" >&2
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-audit --no-fund --no-save --silent "openai@$VERSION" >/dev/null
