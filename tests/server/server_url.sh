# server_url <log> <pid>: the URL `anchorage serve --port 0` (process pid) prints in its log once
# it listens, waited for up to 60 s; fails when the process exits first or never listens.
# Sourced by the shell tests that start real servers.
# shellcheck shell=bash
server_url() {
  local u
  for _ in $(seq 1 600); do
    u="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$1" | head -1 || true)"
    [ -n "$u" ] && { echo "$u"; return 0; }
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
