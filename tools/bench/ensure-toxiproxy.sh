#!/usr/bin/env bash
# Prints the path of a toxiproxy-server binary, building it first if there is none.
#
#   1. ${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin/toxiproxy-server, if present and $TOXIPROXY_VERSION;
#   2. else `go install github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION` into that
#      directory (renamed toxiproxy-server).
#
# Toxiproxy (the network faults of `npm run bench:faults`, docs/performance.md#faults) is on
# neither npm nor Debian; the Go module proxy serves it, as it does oasdiff
# (tools/contracts/ensure-oasdiff.sh). The first build takes a minute or two on two cores, then
# the cached binary starts at once. Progress goes to stderr, only the path to stdout.
set -euo pipefail

TOXIPROXY_VERSION="v2.5.0"
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin"
CACHED="$BIN_DIR/toxiproxy-server"
STAMP="$BIN_DIR/toxiproxy-server.version"

log() { printf 'ensure-toxiproxy: %s\n' "$*" >&2; }

if [[ -x "$CACHED" && -f "$STAMP" && "$(cat "$STAMP")" == "$TOXIPROXY_VERSION" ]]; then
  echo "$CACHED"
  exit 0
fi

GO="$(command -v go || true)"
[[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
if [[ -z "$GO" ]]; then
  log "no toxiproxy-server cached in $BIN_DIR and no Go toolchain to build one"
  exit 1
fi

mkdir -p "$BIN_DIR"
log "building toxiproxy $TOXIPROXY_VERSION with $("$GO" version | cut -d' ' -f3) into $BIN_DIR (cached afterwards)"
start=$SECONDS
# Outside any Go module, so `@version` is honoured; into a folder of its own, as the command is named `server`.
build="$(mktemp -d)"
(cd / && GOBIN="$build" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
  "$GO" install -ldflags "-s -w" "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" >&2)
mv "$build/server" "$CACHED"
rm -rf "$build"
echo "$TOXIPROXY_VERSION" >"$STAMP"
log "built in $((SECONDS - start)) s"
echo "$CACHED"
