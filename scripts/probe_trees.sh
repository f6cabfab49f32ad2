#!/bin/bash
# Sourced by the probe scripts (scripts/probe_*.sh): the committed tree unpacked twice into a
# fresh temporary directory, as $work/layout (as it is) and $work/probe (for the script to
# patch), each sharing the repository's compiler cache; the directory goes when the script exits.
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for variant in layout probe; do
  mkdir -p "$work/$variant"
  git -C "$root" archive HEAD | tar -x -C "$work/$variant"
  ln -s "$root/.cache" "$work/$variant/.cache" 2>/dev/null || true
done
