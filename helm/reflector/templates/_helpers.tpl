{{/* Chart name, overridable. */}}
{{- define "reflector.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped name of every object; a release called "reflector" is not doubled. */}}
{{- define "reflector.fullname" -}}
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

{{- define "reflector.selectorLabels" -}}
app.kubernetes.io/name: {{ include "reflector.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The OTLP bridge's pods: a name of their own, so no selector of the processor's matches them. */}}
{{- define "reflector.bridgeSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-otlp-bridge" (include "reflector.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "reflector.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "reflector.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: reflector
{{- end }}

{{- define "reflector.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "reflector.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "reflector.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
The drain deadline and the pod's grace period are set together: Kubernetes SIGKILLs a pod when
terminationGracePeriodSeconds runs out, so it must outlast SHUTDOWN_DEADLINE_MS or a stopping
pod dies before it has committed its offsets.
*/}}
{{- define "reflector.checkGracePeriod" -}}
{{- $deadlineSeconds := divf (float64 .Values.shutdownDeadlineMs) 1000.0 }}
{{- if le (float64 .Values.terminationGracePeriodSeconds) $deadlineSeconds }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be longer than shutdownDeadlineMs (%v ms)" .Values.terminationGracePeriodSeconds .Values.shutdownDeadlineMs) }}
{{- end }}
{{- end }}

{{/* Both autoscalers would fight over spec.replicas: at most one is ever rendered. */}}
{{- define "reflector.useKeda" -}}
{{- if and .Values.autoscaling.enabled .Values.autoscaling.keda.enabled }}true{{ end }}
{{- end }}
{{- define "reflector.useHpa" -}}
{{- if and .Values.autoscaling.enabled (not .Values.autoscaling.keda.enabled) }}true{{ end }}
{{- end }}

{{/*
Environment of every Reflector container: the ConfigMap, then each secret variable by reference
(from existingSecret, or the Secret its entry names), then each *_FILE setting as the path of its
key in the mounted tls Secret.
*/}}
{{- define "reflector.env" -}}
{{- include "reflector.envWith" (dict "root" .) }}
{{- end }}

{{/*
The same, for one role: "migrate" takes DATABASE_URL from init.migrateDatabaseUrl (a user that
may run DDL; the pods' own user need not), "processor" leaves OTLP_TOPIC unset when the OTLP
bridge runs as its own Deployment.
*/}}
{{- define "reflector.envWith" -}}
{{- $root := .root }}
{{- $role := .role | default "" }}
envFrom:
  - configMapRef:
      name: {{ include "reflector.fullname" $root }}
  {{- with $root.Values.extraEnvFrom }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
env:
  {{- range $name, $ref := $root.Values.secretEnv }}
  {{- $ref = ternary $root.Values.init.migrateDatabaseUrl $ref (and (eq $role "migrate") (eq $name "DATABASE_URL") (not (empty $root.Values.init.migrateDatabaseUrl.key))) }}
  - name: {{ $name }}
    valueFrom:
      secretKeyRef:
        name: {{ $ref.secret | default $root.Values.existingSecret }}
        key: {{ $ref.key }}
        {{- /* OTLP/HTTP turns every request away without a key: API_KEYS is then required. */}}
        optional: {{ and ($ref.optional | default false) (not (and (eq $name "API_KEYS") $root.Values.otlpHttp.enabled)) }}
  {{- end }}
  {{- range $name, $file := $root.Values.tls.files }}
  {{- if $file }}
  - name: {{ $name }}
    value: {{ printf "%s/%s" $root.Values.tls.mountPath $file | quote }}
  {{- end }}
  {{- end }}
  {{- if and (eq $role "processor") (include "reflector.bridgeDeployment" $root) }}
  # The OTLP bridge runs in its own Deployment: `start` must not run a second one here.
  - name: OTLP_TOPIC
    value: ""
  {{- end }}
  {{- with $root.Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* The OTLP bridge's topic: config.OTLP_TOPIC, else otlpHttp.topic when OTLP/HTTP is on; empty = no bridge. */}}
{{- define "reflector.otlpTopic" -}}
{{- if .Values.config.OTLP_TOPIC }}{{ .Values.config.OTLP_TOPIC }}
{{- else if .Values.otlpHttp.enabled }}{{ .Values.otlpHttp.topic }}
{{- end }}
{{- end }}

{{/* Whether the OTLP bridge runs as its own Deployment (an OTLP topic, otlpBridge.mode deployment). */}}
{{- define "reflector.bridgeDeployment" -}}
{{- if and (include "reflector.otlpTopic" .) (eq .Values.otlpBridge.mode "deployment") }}true{{ end }}
{{- end }}

{{/*
OTLP/HTTP (POST /v1/traces) is served by the HTTP server of `start` when that process runs the
bridge, and each request needs an API key with the `decide` role: refuse what would serve nothing
or turn every request away.
*/}}
{{- define "reflector.checkOtlpHttp" -}}
{{- if .Values.otlpHttp.enabled }}
{{- if eq .Values.otlpBridge.mode "deployment" }}
{{- fail "otlpHttp.enabled needs otlpBridge.mode: inProcess: /v1/traces is served by the processor's pods only when they run the bridge (a bridge Deployment serves health and metrics only)" }}
{{- end }}
{{- if and .Values.config.OTLP_TOPIC (ne (toString .Values.config.OTLP_TOPIC) .Values.otlpHttp.topic) }}
{{- fail (printf "config.OTLP_TOPIC (%v) and otlpHttp.topic (%v) differ: set the topic once, in otlpHttp.topic" .Values.config.OTLP_TOPIC .Values.otlpHttp.topic) }}
{{- end }}
{{- if not (hasKey .Values.secretEnv "API_KEYS") }}
{{- fail "otlpHttp.enabled: map API_KEYS in secretEnv (a key:tenant:decide entry authorizes an exporter)" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Whether any PEM file is mounted from tls.existingSecret. */}}
{{- define "reflector.tlsFiles" -}}
{{- range $name, $file := .Values.tls.files }}{{ if $file }}true{{ end }}{{ end }}
{{- end }}

{{/* The volume mount of the tls Secret and extraVolumeMounts, for every container. */}}
{{- define "reflector.volumeMounts" -}}
{{- if include "reflector.tlsFiles" . }}
- { name: tls, mountPath: {{ .Values.tls.mountPath | quote }}, readOnly: true }
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The pod's volumes: /tmp, the tls Secret, extraVolumes. */}}
{{- define "reflector.volumes" -}}
- name: tmp
  emptyDir: { sizeLimit: 64Mi }
{{- if include "reflector.tlsFiles" . }}
# CA bundles and the Kafka client certificate, read-only, readable by the pod's group only:
# mode 0440, written in decimal because YAML 1.1 and 1.2 read a leading 0 differently.
- name: tls
  secret:
    secretName: {{ .Values.tls.existingSecret }}
    defaultMode: 288
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Whether Reflector's Kafka is secured (TLS or SASL), so KEDA needs credentials too. */}}
{{- define "reflector.kafkaSecured" -}}
{{- if or .Values.config.KAFKA_SASL_MECHANISM (has (toString .Values.config.KAFKA_SSL) (list "true" "1")) }}true{{ end }}
{{- end }}

{{/*
The kafka scaler's secretTargetRef entries for a secured Kafka (SASL user and password, CA, client
certificate and key), from the same Secrets as the pods'; empty when KEDA is off, Kafka is not
secured, keda.authenticationRef names a TriggerAuthentication, or nothing needs a secret (TLS
with the system's CAs).
*/}}
{{- define "reflector.kedaKafkaAuth" -}}
{{- if and (include "reflector.useKeda" .) (include "reflector.kafkaSecured" .) (not .Values.autoscaling.keda.authenticationRef) }}
{{- range $parameter, $name := dict "username" "KAFKA_SASL_USERNAME" "password" "KAFKA_SASL_PASSWORD" }}
{{- with index $.Values.secretEnv $name }}
- parameter: {{ $parameter }}
  name: {{ .secret | default $.Values.existingSecret }}
  key: {{ .key }}
{{- end }}
{{- end }}
{{- range $parameter, $name := dict "ca" "KAFKA_SSL_CA_FILE" "cert" "KAFKA_SSL_CERT_FILE" "key" "KAFKA_SSL_KEY_FILE" }}
{{- with index $.Values.tls.files $name }}
- parameter: {{ $parameter }}
  name: {{ $.Values.tls.existingSecret }}
  key: {{ . }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Settings that only work together: refuse to render what the pods would refuse to start with. */}}
{{- define "reflector.checkSecurity" -}}
{{- if include "reflector.tlsFiles" . }}
{{- if not .Values.tls.existingSecret }}
{{- fail "tls.files names PEM files: set tls.existingSecret to the Secret that holds them" }}
{{- end }}
{{- end }}
{{- if .Values.config.KAFKA_SASL_MECHANISM }}
{{- range $name := list "KAFKA_SASL_USERNAME" "KAFKA_SASL_PASSWORD" }}
{{- if not (hasKey $.Values.secretEnv $name) }}
{{- fail (printf "config.KAFKA_SASL_MECHANISM is set: add %s to secretEnv" $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
