{{/* Names: the release's when it contains assent (assent-serve), else <release>-assent (prod-assent-serve). */}}
{{- define "assent.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "assent.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "assent.labels" -}}
{{ include "assent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "assent.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* required fails the render with the value's name rather than start a process that refuses to. */}}
{{- define "assent.baseURL" -}}
{{- required "baseURL is required: the address people and agents reach Assent at, such as https://assent.example.com" .Values.baseURL -}}
{{- end -}}

{{/* One variable from a Secret: (dict "env" NAME "ref" {secretName, key}); nothing when secretName is empty. */}}
{{- define "assent.secretEnv" -}}
{{- if .ref.secretName }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.secretName }}
      key: {{ .ref.key }}
{{- end }}
{{- end -}}

{{/* One plain variable; nothing when the value is empty, so the binary's default holds. */}}
{{- define "assent.env" -}}
{{- if .value }}
- name: {{ .env }}
  value: {{ .value | toString | quote }}
{{- end }}
{{- end -}}

{{/* What every process reads, migrate included. */}}
{{- define "assent.env.common" -}}
{{- if not .Values.secretKey.secretName }}{{ fail "secretKey.secretName is required: the Secret holding ASSENT_SECRET_KEY" }}{{ end }}
{{- if not .Values.postgres.url.secretName }}{{ fail "postgres.url.secretName is required: the Secret holding ASSENT_DATABASE_URL" }}{{ end }}
{{- include "assent.secretEnv" (dict "env" "ASSENT_DATABASE_URL" "ref" .Values.postgres.url) }}
{{- include "assent.secretEnv" (dict "env" "ASSENT_SECRET_KEY" "ref" .Values.secretKey) }}
{{- /* The root file system is read-only; the data dir is an emptyDir. */}}
- name: ASSENT_DATA_DIR
  value: /var/lib/assent
{{- include "assent.env" (dict "env" "ASSENT_LOG_LEVEL" "value" .Values.logLevel) }}
{{- end -}}

{{/* What serve and worker share: the public address, Temporal, email, metrics. */}}
{{- define "assent.env.app" -}}
{{ include "assent.env.common" . }}
- name: ASSENT_BASE_URL
  value: {{ include "assent.baseURL" . | quote }}
- name: ASSENT_TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: ASSENT_TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- include "assent.secretEnv" (dict "env" "ASSENT_TEMPORAL_API_KEY" "ref" .Values.temporal.apiKey) }}
{{- if .Values.temporal.tls.clientCertSecretName }}
- name: ASSENT_TEMPORAL_TLS_CERT
  value: /etc/assent/temporal/client.crt
- name: ASSENT_TEMPORAL_TLS_KEY
  value: /etc/assent/temporal/client.key
{{- end }}
{{- if .Values.temporal.tls.ca.secretName }}
- name: ASSENT_TEMPORAL_TLS_CA
  value: /etc/assent/temporal/ca.crt
{{- end }}
{{- include "assent.env" (dict "env" "ASSENT_TEMPORAL_TLS_SERVER_NAME" "value" .Values.temporal.tls.serverName) }}
{{- include "assent.env" (dict "env" "ASSENT_RECEIVER_NETWORKS" "value" .Values.receiverNetworks) }}
{{- if .Values.smtp.host }}
- name: ASSENT_SMTP_HOST
  value: {{ .Values.smtp.host | quote }}
{{- include "assent.env" (dict "env" "ASSENT_SMTP_PORT" "value" .Values.smtp.port) }}
{{- include "assent.env" (dict "env" "ASSENT_SMTP_TLS" "value" .Values.smtp.tls) }}
{{- include "assent.env" (dict "env" "ASSENT_SMTP_FROM" "value" .Values.smtp.from) }}
{{- include "assent.env" (dict "env" "ASSENT_SMTP_USERNAME" "value" .Values.smtp.username) }}
{{- include "assent.secretEnv" (dict "env" "ASSENT_SMTP_PASSWORD" "ref" .Values.smtp.password) }}
{{- end }}
{{- /* Each process's /metrics on a port of its own, off the API's listener and the worker's probes. */}}
- name: ASSENT_METRICS_ADDR
  value: {{ printf "0.0.0.0:%v" .Values.metrics.port | quote }}
{{- include "assent.secretEnv" (dict "env" "ASSENT_METRICS_TOKEN" "ref" .Values.metrics.token) }}
{{- end -}}

{{/* Last, so that a variable given here again wins (the last of a name does). */}}
{{- define "assent.env.extra" -}}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "assent.podSecurityContext" -}}
# The image's user (Dockerfile: uid 10001), by number so that the kubelet can check it is not root.
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "assent.securityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The data dir and /tmp (uploads are spooled there) are the only places written. */}}
{{- define "assent.volumeMounts" -}}
- name: data
  mountPath: /var/lib/assent
- name: tmp
  mountPath: /tmp
{{- if or .Values.temporal.tls.clientCertSecretName .Values.temporal.tls.ca.secretName }}
- name: temporal-tls
  mountPath: /etc/assent/temporal
  readOnly: true
{{- end }}
{{- end -}}

{{- define "assent.volumes" -}}
- name: data
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- if or .Values.temporal.tls.clientCertSecretName .Values.temporal.tls.ca.secretName }}
- name: temporal-tls
  projected:
    defaultMode: 0440
    sources:
      {{- with .Values.temporal.tls.clientCertSecretName }}
      - secret:
          name: {{ . }}
          items:
            - {key: tls.crt, path: client.crt}
            - {key: tls.key, path: client.key}
      {{- end }}
      {{- with .Values.temporal.tls.ca.secretName }}
      - secret:
          name: {{ . }}
          items:
            - {key: {{ $.Values.temporal.tls.ca.key }}, path: ca.crt}
      {{- end }}
{{- end }}
{{- end -}}

{{/* The pod spec's parts every Deployment and the Job share. */}}
{{- define "assent.podCommon" -}}
automountServiceAccountToken: false
# No <SERVICE>_PORT variables: a Service called assent-smtp would set
# ASSENT_SMTP_PORT. The environment is the chart's alone.
enableServiceLinks: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- include "assent.podSecurityContext" . | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "assent.env.serve" -}}
{{ include "assent.env.app" . }}
- name: ASSENT_HTTP_ADDR
  value: {{ printf "0.0.0.0:%v" .Values.serve.port | quote }}
{{- include "assent.env" (dict "env" "ASSENT_REPORTS_DOMAIN" "value" .Values.reportsDomain) }}
{{- include "assent.env" (dict "env" "ASSENT_BLOB_URL" "value" .Values.blob.url) }}
{{- with .Values.blob.credentials }}
{{- include "assent.secretEnv" (dict "env" "AWS_ACCESS_KEY_ID" "ref" (dict "secretName" .secretName "key" .accessKeyIDKey)) }}
{{- include "assent.secretEnv" (dict "env" "AWS_SECRET_ACCESS_KEY" "ref" (dict "secretName" .secretName "key" .secretAccessKeyKey)) }}
{{- end }}
{{- include "assent.env" (dict "env" "ASSENT_TRUSTED_PROXIES" "value" .Values.trustedProxies) }}
{{- include "assent.env" (dict "env" "ASSENT_OPERATORS" "value" .Values.operators) }}
{{- include "assent.env" (dict "env" "ASSENT_TEMPORAL_UI_URL" "value" .Values.temporalUIURL) }}
{{- include "assent.env" (dict "env" "ASSENT_OIDC_ISSUER" "value" .Values.oidc.issuer) }}
{{- include "assent.env" (dict "env" "ASSENT_OIDC_CLIENT_ID" "value" .Values.oidc.clientID) }}
{{- include "assent.env" (dict "env" "ASSENT_OIDC_LABEL" "value" .Values.oidc.label) }}
{{- include "assent.secretEnv" (dict "env" "ASSENT_OIDC_CLIENT_SECRET" "ref" .Values.oidc.clientSecret) }}
{{- include "assent.env.extra" . }}
{{- end -}}

{{- define "assent.env.worker" -}}
{{ include "assent.env.app" . }}
- name: ASSENT_WORKER_HTTP_ADDR
  value: {{ printf "0.0.0.0:%v" .Values.worker.probePort | quote }}
{{- with .Values.worker.deployment }}
- name: ASSENT_WORKER_DEPLOYMENT
  value: {{ . | quote }}
{{- end }}
{{- include "assent.env.extra" . }}
{{- end -}}
