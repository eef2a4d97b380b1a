#!/usr/bin/env bash
# Prints the path of a helm binary, building it first if there is none.
#
#   1. `helm` on PATH, if present;
#   2. else ${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin/helm, if present and v3.19.0;
#   3. else `go install helm.sh/helm/v3/cmd/helm@v3.19.0` into that directory.
#
# Helm is packaged neither in Debian nor on npm, but the Go module proxy serves it. The build
# takes a few minutes on two cores; progress goes to stderr, only the path goes to stdout:
#   HELM="$(tools/helm/ensure-helm.sh)"
#
# A bare `go install` would leave out the -X flags of Helm's own Makefile, and such a helm
# believes the cluster is Kubernetes v1.20 (template/lint defaults) and reports version
# "v3.19". We pass the same flags as the Makefile: version v3.19.0, Kubernetes 1.34 (its
# client-go is v0.34).
set -euo pipefail

HELM_VERSION="v3.19.0"
K8S_MAJOR=1
K8S_MINOR=34
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin"
CACHED="$BIN_DIR/helm"

log() { printf 'ensure-helm: %s\n' "$*" >&2; }

if command -v helm >/dev/null 2>&1; then
  command -v helm
  exit 0
fi

if [[ -x "$CACHED" ]] && [[ "$("$CACHED" version --template '{{.Version}}' 2>/dev/null)" == "$HELM_VERSION" ]]; then
  echo "$CACHED"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "no helm on PATH, none cached in $BIN_DIR, and no Go toolchain to build one"
  exit 1
fi

mkdir -p "$BIN_DIR"
log "building helm $HELM_VERSION with $(go version | cut -d' ' -f3) into $BIN_DIR (takes minutes; cached afterwards)"
ldflags="-s -w"
ldflags+=" -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  ldflags+=" -X $pkg.k8sVersionMajor=$K8S_MAJOR -X $pkg.k8sVersionMinor=$K8S_MINOR"
done

start=$SECONDS
# Run outside any Go module (the caller's directory might be one) so `@version` is honoured.
(
  cd /
  # -v names each package as it is compiled; every 25th is enough to show progress.
  GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
    go install -v -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" 2>&1 |
    awk '/^go: / { print "ensure-helm: " $0; fflush(); next }
         { n++; if (n % 25 == 1) { print "ensure-helm: compiling (" n ") " $0; fflush() } }' >&2
)
log "built in $((SECONDS - start)) s: $("$CACHED" version --short)"
echo "$CACHED"
