#!/usr/bin/env bash
# Installs one pinned npm package into its own prefix under .cache/node, for the tests that
# check our output with code no one here wrote. Idempotent: does nothing when the pinned
# version is there. Called by scripts/deps.sh; needs npm and the registry.
#
#   install_npm_package.sh NAME VERSION PREFIX      (PREFIX relative to the repository)
#
# One prefix per package: `npm install --no-save` prunes every package the prefix has no
# package.json entry for, so two --no-save installs into one prefix remove each other.
set -euo pipefail

NAME="$1"
VERSION="$2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/$3"
PKG="$DEST/node_modules/$NAME/package.json"

if [ -f "$PKG" ] && [ "$(node -p "require('$PKG').version" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "install_npm_package: $NAME@$VERSION -> ${DEST#"$ROOT"/}" >&2
mkdir -p "$DEST"
npm install --prefix "$DEST" --no-audit --no-fund --no-save --silent "$NAME@$VERSION" >/dev/null
