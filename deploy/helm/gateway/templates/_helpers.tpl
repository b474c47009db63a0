{{/* Names and labels. */}}
{{- define "gateway.fullname" -}}
{{- trunc 40 (printf "%s-gateway" .Release.Name) -}}
{{- end }}

{{- define "gateway.labels" -}}
app.kubernetes.io/name: gateway
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.customer }}
gateway.ai/customer: {{ . | quote }}
{{- end }}
{{- with .Values.environment }}
gateway.ai/environment: {{ . | quote }}
{{- end }}
{{- end }}

{{/* The image reference. */}}
{{- define "gateway.image" -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}

{{/* GATEWAY_SHUTDOWN_GRACE in whole seconds (the gateway's single-unit durations). */}}
{{- define "gateway.graceSeconds" -}}
{{- $g := toString (default "30s" .Values.settings.GATEWAY_SHUTDOWN_GRACE) -}}
{{- if hasSuffix "ms" $g -}}{{ div (int (trimSuffix "ms" $g)) 1000 }}
{{- else if hasSuffix "s" $g -}}{{ int (trimSuffix "s" $g) }}
{{- else if hasSuffix "m" $g -}}{{ mul (int (trimSuffix "m" $g)) 60 }}
{{- else if hasSuffix "h" $g -}}{{ mul (int (trimSuffix "h" $g)) 3600 }}
{{- else if hasSuffix "d" $g -}}{{ mul (int (trimSuffix "d" $g)) 86400 }}
{{- else -}}{{ required "settings.GATEWAY_SHUTDOWN_GRACE must be a duration such as 30s" "" }}
{{- end -}}
{{- end }}

{{/* terminationGracePeriodSeconds: above GATEWAY_SHUTDOWN_GRACE so streams drain. */}}
{{- define "gateway.terminationGrace" -}}
{{ add (include "gateway.graceSeconds" .) .Values.terminationGraceExtraSeconds }}
{{- end }}

{{/* Ports from the settings. */}}
{{- define "gateway.port" -}}{{ int (default "8080" .Values.settings.GATEWAY_PORT) }}{{- end }}
{{- define "gateway.adminPort" -}}{{ int (default "8081" .Values.settings.GATEWAY_ADMIN_PORT) }}{{- end }}
{{- define "gateway.metricsPort" -}}{{ int (default .Values.metrics.port .Values.settings.GATEWAY_METRICS_PORT) }}{{- end }}

{{/*
Environment of a gateway container. Context: dict "root" $ "overrides" (map) "dataPlane" bool.
Plain settings (overrides win), then secret settings from the chart's Secret or an existing one.
*/}}
{{- define "gateway.env" -}}
{{- $root := .root -}}
{{- $over := .overrides -}}
{{- range $name, $v := $root.Values.settings }}
{{- if not (hasKey $over $name) }}
{{- if ne (toString $v) "" }}
- name: {{ $name }}
  value: {{ toString $v | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- range $name, $v := $over }}
{{- if ne (toString $v) "" }}
- name: {{ $name }}
  value: {{ toString $v | quote }}
{{- end }}
{{- end }}
{{- if and (eq (toString (default "" (index $root.Values.settings "BUN_JSC_forceRAMSize"))) "") (eq (toString (default "" (index $over "BUN_JSC_forceRAMSize"))) "") }}
- name: BUN_JSC_forceRAMSize
  valueFrom:
    resourceFieldRef:
      resource: limits.memory
{{- end }}
{{- if and (not (hasKey $root.Values.settings "GATEWAY_METRICS_PORT")) (not (hasKey $over "GATEWAY_METRICS_PORT")) }}
- name: GATEWAY_METRICS_PORT
  value: {{ toString $root.Values.metrics.port | quote }}
{{- end }}
{{- $dataPlane := .dataPlane -}}
{{- range $name, $s := $root.Values.secretSettings }}
{{- if or (not $dataPlane) (eq $name "REDIS_URL") }}
{{- if $s.existingSecret }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret }}
      key: {{ default $name $s.key }}
{{- else if $s.value }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "gateway.fullname" $root }}-{{ if $dataPlane }}dataplane-{{ end }}settings
      key: {{ $name }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Probes on /healthz and /readyz of `port`. Context: dict "root" $ "port" N. */}}
{{- define "gateway.probes" -}}
{{- $p := .root.Values.probes -}}
startupProbe:
  httpGet: { path: /healthz, port: {{ .port }} }
  periodSeconds: {{ $p.startup.periodSeconds }}
  failureThreshold: {{ $p.startup.failureThreshold }}
readinessProbe:
  httpGet: { path: /readyz, port: {{ .port }} }
  periodSeconds: {{ $p.readiness.periodSeconds }}
  failureThreshold: {{ $p.readiness.failureThreshold }}
livenessProbe:
  httpGet: { path: /healthz, port: {{ .port }} }
  periodSeconds: {{ $p.liveness.periodSeconds }}
  failureThreshold: {{ $p.liveness.failureThreshold }}
{{- end }}

{{/* Pod-level parts shared by every gateway pod. Context: dict "root" $ "selector" (map). */}}
{{- define "gateway.podCommon" -}}
{{- $root := .root -}}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
automountServiceAccountToken: false
terminationGracePeriodSeconds: {{ include "gateway.terminationGrace" $root }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $root.Values.topologySpread.enabled }}
topologySpreadConstraints:
  - maxSkew: {{ $root.Values.topologySpread.maxSkew }}
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- toYaml .selector | nindent 8 }}
  - maxSkew: {{ $root.Values.topologySpread.maxSkew }}
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- toYaml .selector | nindent 8 }}
{{- end }}
{{- end }}
