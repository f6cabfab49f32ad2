#!/usr/bin/env bash
# Installs Hugging Face's GGUF reader, the npm package @huggingface/gguf (version pinned), into
# .cache/node/gguf/node_modules for the independent-reader check of the files anchorage writes
# (tests/model/gguf_npm_reader_test.mjs). Idempotent: does nothing when the pinned version is
# there. Called by scripts/deps.sh; needs npm and the registry.
#
# Its own prefix, not .cache/node's: `npm install --no-save` prunes every package the prefix
# has no package.json entry for, so two --no-save installs into one prefix remove each other
# (install_node_sdk.sh puts the openai SDK in .cache/node).
set -euo pipefail

VERSION="0.4.6"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.cache/node/gguf"
PKG="$DEST/node_modules/@huggingface/gguf/package.json"

if [ -f "$PKG" ] && [ "$(node -p "require('$PKG').version" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "install_node_gguf: @huggingface/gguf@$VERSION -> ${DEST#"$ROOT"/}" >&2
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-audit --no-fund --no-save --silent \
  "@huggingface/gguf@$VERSION" >/dev/null
