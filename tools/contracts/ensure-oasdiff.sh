#!/usr/bin/env bash
# Prints the path of an oasdiff binary, building it first if there is none.
#
#   1. ${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin/oasdiff, if present and $OASDIFF_VERSION;
#   2. else `go install github.com/oasdiff/oasdiff@$OASDIFF_VERSION` into that directory.
#
# oasdiff is on neither npm nor Debian; the Go module proxy serves it. The first build takes
# about a minute on two cores, then the cached binary answers in milliseconds (as helm does,
# see tools/helm/ensure-helm.sh). Progress goes to stderr, only the path to stdout.
set -euo pipefail

OASDIFF_VERSION="v1.37.0"
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin"
CACHED="$BIN_DIR/oasdiff"
STAMP="$BIN_DIR/oasdiff.version"

log() { printf 'ensure-oasdiff: %s\n' "$*" >&2; }

# `oasdiff --version` prints the version its release build was stamped with, which `go install`
# leaves out, so a stamp file beside the binary records what was built.
if [[ -x "$CACHED" && -f "$STAMP" && "$(cat "$STAMP")" == "$OASDIFF_VERSION" ]]; then
  echo "$CACHED"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "no oasdiff cached in $BIN_DIR and no Go toolchain to build one"
  exit 1
fi

mkdir -p "$BIN_DIR"
log "building oasdiff $OASDIFF_VERSION with $(go version | cut -d' ' -f3) into $BIN_DIR (cached afterwards)"
start=$SECONDS
# Outside any Go module, so `@version` is honoured.
(cd / && GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
  go install -ldflags "-s -w" "github.com/oasdiff/oasdiff@$OASDIFF_VERSION" >&2)
echo "$OASDIFF_VERSION" >"$STAMP"
log "built in $((SECONDS - start)) s"
echo "$CACHED"
