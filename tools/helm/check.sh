#!/usr/bin/env bash
# Checks the Helm chart, the manifests generated from it and deploy/compose.yaml. Needs no
# cluster, no Docker engine, and no network once helm and the validators are built (they are
# cached in ${XDG_CACHE_HOME:-~/.cache}/recur/bin). Exits non-zero on any failure.
#
# For the default values and for helm/recur/ci/full-values.yaml (every optional feature on):
#   1. helm lint --strict
#   2. helm template
#   3. yamllint (Debian package `yamllint`) on the rendered YAML
#   4. kube-strict (tools/helm/validate/cmd/kube-strict): strict decoding into the Kubernetes
#      API types plus cross-object checks. It stands in for `kubectl apply --dry-run=client`, which
#      needs a cluster for its OpenAPI document. kubeconform is not used: it has no built-in
#      schemas and downloads them from the network. If you have a local schema copy, set
#      KUBECONFORM_SCHEMA_LOCATION (and have kubeconform on PATH) and it runs too.
# Then:
#   5. guard rails: values that must be rejected are rejected (schema, required secrets, …);
#   6. deploy/k8s/ is what tools/helm/render-manifests.sh renders now;
#   7. deploy/compose.yaml loads with the Compose spec loader and matches the chart's mesh
#      (tools/helm/validate/cmd/compose-check);
#   8. deploy/Dockerfile's Node.js base image is an LTS line inside its support window;
#   9. yamllint on the values files, deploy/compose.yaml and deploy/k8s;
#  10. values.yaml's requests and HPA targets are the capacity table's (tools/helm/capacity-values.mjs).
#
# Set CHECK_REQUIRE_TOOLS=1 (as CI should) to fail instead of skipping when yamllint is
# missing.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
CHART=helm/recur
KUBE_VERSION=1.34.0
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/recur/bin"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

failures=0
pass() { printf '  ok    %s\n' "$1"; }
fail() { printf '  FAIL  %s\n' "$1"; failures=$((failures + 1)); }
skip() { printf '  skip  %s\n' "$1"; }
section() { printf '\n== %s\n' "$1"; }
# run LABEL CMD...: runs CMD, shows its output only when it fails.
run() {
  local label="$1"; shift
  if "$@" >"$TMP/out" 2>&1; then pass "$label"; return 0; fi
  fail "$label"; sed 's/^/        /' "$TMP/out"; return 1
}

section "tools"
HELM="$("$ROOT/tools/helm/ensure-helm.sh")" || { echo "cannot get helm"; exit 1; }
export HELM
pass "helm $("$HELM" version --short) ($HELM)"

# The offline validators (tools/helm/validate): rebuilt when their sources are newer than
# the cached binaries.
KUBE_STRICT="$BIN_DIR/kube-strict"
COMPOSE_CHECK="$BIN_DIR/compose-check"
src="$ROOT/tools/helm/validate"
if [[ ! -x "$KUBE_STRICT" || ! -x "$COMPOSE_CHECK" ||
      -n "$(find "$src" -type f -newer "$KUBE_STRICT" -print -quit)" ]]; then
  echo "  building tools/helm/validate (the first build compiles the Kubernetes API types: ~1-2 min)" >&2
  mkdir -p "$BIN_DIR"
  if ! (cd "$src" && go build -o "$BIN_DIR/" ./cmd/...) >"$TMP/out" 2>&1; then
    fail "build tools/helm/validate"; cat "$TMP/out"; exit 1
  fi
fi
pass "kube-strict, compose-check ($BIN_DIR)"

YAMLLINT=""
if command -v yamllint >/dev/null 2>&1; then
  YAMLLINT="$(command -v yamllint)"
  pass "$("$YAMLLINT" --version)"
elif [[ "${CHECK_REQUIRE_TOOLS:-0}" == 1 ]]; then
  fail "yamllint not installed (apt-get install -y yamllint)"
else
  skip "yamllint not installed (apt-get install -y yamllint); YAML style checks skipped"
fi

for variant in default full; do
  args=(--kube-version "$KUBE_VERSION")
  [[ $variant == full ]] && args+=(-f "$CHART/ci/full-values.yaml")
  section "values: $variant"
  run "helm lint --strict" "$HELM" lint --strict "$CHART" "${args[@]}"
  out="$TMP/$variant.yaml"
  if "$HELM" template recur "$CHART" "${args[@]}" >"$out" 2>"$TMP/err"; then
    pass "helm template ($(grep -c '^kind:' "$out") objects)"
  else
    fail "helm template"; sed 's/^/        /' "$TMP/err"; continue
  fi
  if [[ -n $YAMLLINT ]]; then
    run "yamllint rendered manifests" "$YAMLLINT" --strict -c tools/helm/yamllint.yaml "$out"
  fi
  run "kube-strict" "$KUBE_STRICT" "$out" && sed 's/^/        /' "$TMP/out"
  if command -v kubeconform >/dev/null 2>&1 && [[ -n "${KUBECONFORM_SCHEMA_LOCATION:-}" ]]; then
    run "kubeconform (local schemas)" kubeconform -strict -summary \
      -kubernetes-version "$KUBE_VERSION" -schema-location "$KUBECONFORM_SCHEMA_LOCATION" "$out"
  else
    skip "kubeconform: needs schemas from the network (set KUBECONFORM_SCHEMA_LOCATION to a local copy)"
  fi
done

section "guard rails (each must be rejected)"
# expect_reject LABEL PATTERN HELM-ARGS...: helm template must fail with PATTERN in its error.
expect_reject() {
  local label="$1" pattern="$2"; shift 2
  if "$HELM" template recur "$CHART" --kube-version "$KUBE_VERSION" "$@" >"$TMP/out" 2>&1; then
    fail "$label: was accepted"
  elif grep -q -- "$pattern" "$TMP/out"; then
    pass "$label"
  else
    fail "$label: failed for another reason"; sed 's/^/        /' "$TMP/out"
  fi
}
expect_reject "misspelt value (schema)" "additional properties 'replicaCont'" --set defaults.replicaCont=3
expect_reject "unknown server kind (schema)" "/apps/catalog/server': value must be one of" --set apps.catalog.server=rest
expect_reject "secrets.create without database URLs" "secrets.databaseUrls.catalog is required" \
  --set secrets.create=true --set secrets.operatorToken=x
expect_reject "secrets.create without operator token" "secrets.operatorToken is required" \
  --set secrets.create=true
expect_reject "secrets.create without the SMTP URL" "secrets.smtpUrl is required" \
  -f helm/recur/ci/full-values.yaml --set secrets.smtpUrl=
expect_reject "an SMTP URL that is not smtp:// or smtps:// (schema)" "/secrets/smtpUrl" \
  --set secrets.smtpUrl=https://mail.example.com
expect_reject "call to a disabled app" 'not an enabled app' --set apps.catalog.enabled=false
expect_reject "HPA without a target" "needs a CPU or memory utilization target" \
  --set defaults.autoscaling.enabled=true --set apps.catalog.autoscaling.targetCPUUtilizationPercentage=0

section "requests and HPA targets from the capacity table"
# values.yaml's per-app requests and targets are derived from helm/recur/capacity.json
# (docs/operations/capacity.md#from-the-table-to-the-chart); a hand edit of either fails here.
run "values.yaml agrees with helm/recur/capacity.json" node tools/helm/capacity-values.mjs --check &&
  sed 's/^/        /' "$TMP/out"

section "deploy/k8s is up to date"
if tools/helm/render-manifests.sh "$TMP/k8s" 2>"$TMP/err"; then
  if diff -ru deploy/k8s "$TMP/k8s" -x README.md >"$TMP/diff"; then
    pass "deploy/k8s matches the chart"
  else
    fail "deploy/k8s differs from the chart: run tools/helm/render-manifests.sh"
    head -60 "$TMP/diff" | sed 's/^/        /'
  fi
  run "kube-strict deploy/k8s" "$KUBE_STRICT" deploy/k8s/*.yaml && sed 's/^/        /' "$TMP/out"
else
  fail "render deploy/k8s"; sed 's/^/        /' "$TMP/err"
fi

section "node flags"
# The chart's command (Kubernetes) and the image's CMD (Compose, docker run) start node alike.
image_flags="$(grep '^CMD ' deploy/Dockerfile | grep -o -- '--[a-z0-9=-]*' | sort | tr '\n' ' ')"
chart_flags="$(sed -n '/define "recur.command"/,/end/p' "$CHART/templates/_helpers.tpl" | grep -o -- '^- --[a-z0-9=-]*' | cut -c3- | sort | tr '\n' ' ')"
if [[ "$image_flags" == "$chart_flags" ]]; then pass "the chart's command and deploy/Dockerfile's CMD: ${image_flags:-no flags}"
else fail "node flags differ: deploy/Dockerfile's CMD [$image_flags], the chart's recur.command [$chart_flags]"; fi

section "Node.js base image"
# The images run on a Node.js LTS line inside its support window (dates: the Node.js release
# schedule, github.com/nodejs/Release). A line past its end of life, or one missing here, fails:
# move deploy/Dockerfile's NODE_IMAGE to the current LTS line (and add that line's date below).
declare -A NODE_END_OF_LIFE=([20]=2026-04-30 [22]=2027-04-30 [24]=2028-04-30 [26]=2029-04-30)
node_image="$(sed -n 's/^ARG NODE_IMAGE=//p' deploy/Dockerfile)"
node_major="$(sed -n 's/^node:\([0-9]*\)[.-].*/\1/p' <<<"$node_image")"
node_eol="${NODE_END_OF_LIFE[${node_major:-none}]:-}"
if [[ -z $node_major ]]; then fail "deploy/Dockerfile's NODE_IMAGE ($node_image) names no node:<major> image"
elif [[ -z $node_eol ]]; then fail "deploy/Dockerfile's NODE_IMAGE $node_image: Node.js $node_major is no supported LTS line (known: ${!NODE_END_OF_LIFE[*]})"
elif [[ "$(date -u +%F)" > "$node_eol" ]]; then fail "deploy/Dockerfile's NODE_IMAGE $node_image: Node.js $node_major reached its end of life on $node_eol"
else pass "deploy/Dockerfile's NODE_IMAGE $node_image: Node.js $node_major LTS, supported until $node_eol"; fi
# The chart runs the images' unprivileged `node` user (uid 1000), which every node image has.
if grep -q 'runAsUser: 1000' "$CHART/values.yaml"; then pass "the chart runs as uid 1000, the node images' node user"
else fail "the chart's runAsUser is not the node images' node user (1000)"; fi

section "deploy/compose.yaml"
run "compose-check (Compose spec loader + chart mesh)" \
  "$COMPOSE_CHECK" deploy/compose.yaml "$CHART/values.yaml" deploy/postgres/init-databases.sql &&
  sed 's/^/        /' "$TMP/out"

section "other YAML"
if [[ -n $YAMLLINT ]]; then
  run "yamllint values, CI values, deploy/compose.yaml, deploy/k8s" "$YAMLLINT" --strict \
    -c tools/helm/yamllint.yaml "$CHART/Chart.yaml" "$CHART/values.yaml" "$CHART"/ci/*.yaml \
    deploy/compose.yaml deploy/k8s/*.yaml
else
  skip "yamllint not installed"
fi

echo
if ((failures > 0)); then
  echo "check: $failures failure(s)"
  exit 1
fi
echo "check: all passed"
