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
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
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

{{/* Environment of every Reflector container: the ConfigMap, then each secret variable by reference. */}}
{{- define "reflector.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "reflector.fullname" . }}
env:
  {{- range $name, $ref := .Values.secretEnv }}
  - name: {{ $name }}
    valueFrom:
      secretKeyRef:
        name: {{ $.Values.existingSecret }}
        key: {{ $ref.key }}
        optional: {{ $ref.optional | default false }}
  {{- end }}
{{- end }}
