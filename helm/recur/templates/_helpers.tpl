{{/*
Helpers for the Recur chart.

Every per-app template (deployment.yaml, service.yaml, …) loops over the enabled apps:

  {{- range $name := include "recur.appNames" $ | fromJsonArray }}
  {{- $app := include "recur.app" (dict "root" $ "name" $name) | fromJson }}
  …one document per app…

`recur.app` returns the app's effective settings: .Values.defaults merged with
.Values.apps.<name>, plus a few derived fields (name, fullname, port numbers).
*/}}

{{/* Chart name. */}}
{{- define "recur.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-wide name prefix ("recur" for a release called recur). */}}
{{- define "recur.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "recur.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of one app's resources: <fullname>-<app>. Argument: (dict "root" $ "name" "catalog"). */}}
{{- define "recur.appFullname" -}}
{{- printf "%s-%s" (include "recur.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels shared by every resource of the release. Argument: the root context. */}}
{{- define "recur.commonLabels" -}}
helm.sh/chart: {{ include "recur.chart" . }}
app.kubernetes.io/name: {{ include "recur.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: recur
{{- end }}

{{/*
Selector labels of one component. Argument: (dict "root" $ "component" "catalog").
The component is the app name for app pods and "<app>-migration" for migration Jobs, so a
NetworkPolicy or Service selecting an app never matches its migration pods.
*/}}
{{- define "recur.selectorLabels" -}}
app.kubernetes.io/name: {{ include "recur.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* All labels of one component. Argument: (dict "root" $ "component" "catalog"). */}}
{{- define "recur.labels" -}}
{{ include "recur.commonLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
recur.mergeInto: merges map .src into map .dst, in place. Maps merge recursively; every
other value from .src (lists, strings, numbers, and also false / 0 / "") replaces the one in
.dst. (sprig's mergeOverwrite skips "empty" values, so it cannot turn a default `true` off.)
*/}}
{{- define "recur.mergeInto" -}}
{{- $dst := .dst }}
{{- range $key, $value := .src }}
{{- $current := get $dst $key }}
{{- if and (kindIs "map" $value) (kindIs "map" $current) }}
{{- include "recur.mergeInto" (dict "dst" $current "src" $value) }}
{{- else }}
{{- $_ := set $dst $key (deepCopy $value) }}
{{- end }}
{{- end }}
{{- end }}

{{/* JSON list of the enabled apps' names, sorted. Argument: the root context. */}}
{{- define "recur.appNames" -}}
{{- $names := list }}
{{- range $name, $app := .Values.apps }}
{{- if (get $app "enabled" | default false) }}
{{- $names = append $names $name }}
{{- end }}
{{- end }}
{{- toJson $names }}
{{- end }}

{{/*
recur.app: one app's effective settings as JSON. Argument: (dict "root" $ "name" "catalog").
Adds: name, fullname, grpc (bool), containerPort, metricsPort, servicePort, secretName.
Fails early on values that would otherwise render a broken mesh.
*/}}
{{- define "recur.app" -}}
{{- $root := .root }}
{{- $name := .name }}
{{- $raw := get $root.Values.apps $name }}
{{- $app := deepCopy $root.Values.defaults }}
{{- include "recur.mergeInto" (dict "dst" $app "src" $raw) }}
{{- if not (has (get $app "server") (list "grpc" "http")) }}
{{- fail (printf "apps.%s.server must be \"grpc\" or \"http\"" $name) }}
{{- end }}
{{- $enabled := include "recur.appNames" $root | fromJsonArray }}
{{- range $peer := (get $app "calls" | default list) }}
{{- if not (has $peer $enabled) }}
{{- fail (printf "apps.%s.calls names %q, which is not an enabled app" $name $peer) }}
{{- end }}
{{- if ne (get (get $root.Values.apps $peer) "server") "grpc" }}
{{- fail (printf "apps.%s.calls names %q, which is not a gRPC service" $name $peer) }}
{{- end }}
{{- end }}
{{- $grpc := eq $app.server "grpc" }}
{{- $_ := set $app "name" $name }}
{{- $_ := set $app "calls" (get $app "calls" | default list) }}
{{- $_ := set $app "fullname" (include "recur.appFullname" (dict "root" $root "name" $name)) }}
{{- $_ := set $app "grpc" $grpc }}
{{- $_ := set $app "containerPort" (ternary $root.Values.ports.grpc $root.Values.ports.http $grpc) }}
{{- /* The gateway serves /metrics on its admin port (ADMIN_PORT, never public); the gRPC services on METRICS_PORT. */}}
{{- $_ := set $app "metricsPort" (ternary $root.Values.ports.metrics $root.Values.ports.admin $grpc) }}
{{- $_ := set $app "servicePort" ($app.service.port | default $app.containerPort) }}
{{- $_ := set $app "secretName" (include "recur.secretName" $root) }}
{{- toJson $app }}
{{- end }}

{{/* Name of the Secret holding database URLs and the operator token. Argument: root. */}}
{{- define "recur.secretName" -}}
{{- .Values.secrets.name | default (printf "%s-secrets" (include "recur.fullname" .)) }}
{{- end }}

{{/* Secret key holding one app's DATABASE_URL. Argument: the app name. */}}
{{- define "recur.databaseUrlKey" -}}
{{- printf "%s-database-url" . }}
{{- end }}

{{/* Environment variable carrying a peer's address: usage-metering -> USAGE_METERING_GRPC_ADDR. */}}
{{- define "recur.peerAddrVar" -}}
{{- printf "%s_GRPC_ADDR" (. | upper | replace "-" "_") }}
{{- end }}

{{/* Image reference of one app. Argument: (dict "root" $ "app" $app). */}}
{{- define "recur.image" -}}
{{- $g := .root.Values.global.image }}
{{- $i := .app.image }}
{{- $registry := $i.registry | default $g.registry }}
{{- $repository := $i.repository | default (printf "recur-%s" .app.name) }}
{{- $ref := ternary (printf "%s/%s" $registry $repository) $repository (ne $registry "") }}
{{- if $i.digest }}
{{- printf "%s@%s" $ref $i.digest }}
{{- else }}
{{- printf "%s:%s" $ref ($i.tag | default $g.tag | default .root.Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
Environment of one app: the runtime contract. Shared by the app's Deployment and its
migration Job, so `migrate` sees exactly the configuration the server does.
Argument: (dict "root" $ "app" $app).
*/}}
{{- define "recur.env" -}}
{{- $root := .root }}
{{- $app := .app -}}
- name: NODE_ENV
  value: production
- name: LOG_LEVEL
  value: {{ $root.Values.logLevel | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $app.secretName }}
      key: {{ include "recur.databaseUrlKey" $app.name }}
- name: KAFKA_BROKERS
  value: {{ required "kafka.brokers is required" $root.Values.kafka.brokers | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ $app.name | quote }}
{{- with $root.Values.telemetry.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- if $app.grpc }}
- name: GRPC_PORT
  value: {{ $root.Values.ports.grpc | quote }}
- name: METRICS_PORT
  value: {{ $root.Values.ports.metrics | quote }}
- name: OUTBOX_RETENTION_HOURS
  value: {{ $root.Values.outbox.retentionHours | quote }}
{{- else }}
- name: HTTP_PORT
  value: {{ $root.Values.ports.http | quote }}
- name: ADMIN_PORT
  value: {{ $root.Values.ports.admin | quote }}
{{- end }}
{{- range $peer := $app.calls }}
- name: {{ include "recur.peerAddrVar" $peer }}
  value: {{ printf "%s:%v" (include "recur.appFullname" (dict "root" $root "name" $peer)) $root.Values.ports.grpc | quote }}
{{- end }}
{{- range $var, $key := $app.secretEnv }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $app.secretName }}
      key: {{ $key }}
{{- end }}
{{- $publicUrl := required "publicUrl is required" $root.Values.publicUrl }}
{{- if eq $app.name "gateway" }}
- name: CUSTOMER_PORTAL_URL
  value: {{ printf "%s/customer-portal" $publicUrl | quote }}
- name: SALES_LINK_URL
  value: {{ printf "%s/buy" $publicUrl | quote }}
{{- else if eq $app.name "invoicing" }}
- name: PAYMENT_PAGE_URL
  value: {{ printf "%s/pay" $publicUrl | quote }}
{{- else if eq $app.name "payments" }}
- name: PAYMENT_PAGES_URL
  value: {{ $publicUrl | quote }}
{{- end }}
{{- range $var, $value := $app.env }}
- name: {{ $var }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* The writable /tmp of a read-only root filesystem. Argument: the app. */}}
{{- define "recur.tmpVolume" -}}
- name: tmp
  emptyDir:
    {{- with .tmpVolume.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- end }}

{{- define "recur.tmpVolumeMount" -}}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/*
Command running one app; args are appended (e.g. "migrate"). Argument: the app name. Node's flags
are deploy/Dockerfile's CMD's (check.sh compares them): V8's allocation-site pretenuring had the
request path allocate in the old generation after a burst (docs/performance.md#what-the-profiles-found).
*/}}
{{- define "recur.command" -}}
- node
- --no-allocation-site-pretenuring
- apps/{{ . }}/dist/main.js
{{- end }}
