{{/* Names and labels, as `helm create` makes them (63 characters: DNS label limit). */}}
{{- define "mockgateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mockgateway.fullname" -}}
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

{{- define "mockgateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mockgateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mockgateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mockgateway.labels" -}}
helm.sh/chart: {{ include "mockgateway.chart" . }}
{{ include "mockgateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mockgateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mockgateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image: repository@digest when a digest is set, else repository:tag (tag defaults to appVersion). */}}
{{- define "mockgateway.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The Secret holding the API key: the one named, else the one this chart creates from apiKey.value. */}}
{{- define "mockgateway.apiKeySecretName" -}}
{{- default (printf "%s-api-key" (include "mockgateway.fullname" .)) .Values.apiKey.existingSecret }}
{{- end }}

{{/* The container's security context, shared by the service and the helm test pod: the image's
     distroless nonroot user, nothing writable but mounted volumes, no privilege at all. */}}
{{- define "mockgateway.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "mockgateway.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* serviceMonitor.enabled: true, false, or auto (when the cluster serves monitoring.coreos.com/v1). */}}
{{- define "mockgateway.serviceMonitorEnabled" -}}
{{- $v := toString .Values.serviceMonitor.enabled }}
{{- if or (eq $v "true") (and (eq $v "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1")) }}true{{ end }}
{{- end }}

{{/* Mount points. Directories, never subPath: a ConfigMap update reaches a directory mount
     through the kubelet's atomic ..data symlink swap, but never reaches a subPath mount. */}}
{{- define "mockgateway.catalogDir" -}}/etc/mockgateway/catalog{{- end }}
{{- define "mockgateway.fixturesDir" -}}/etc/mockgateway/fixtures{{- end }}

{{/* --allowed-hosts: the names the Service is called by in the cluster (NAME, NAME.NAMESPACE,
     NAME.NAMESPACE.svc, NAME.NAMESPACE.svc.CLUSTER-DOMAIN), then config.allowedHosts. */}}
{{- define "mockgateway.allowedHosts" -}}
{{- $svc := include "mockgateway.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $names := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.clusterDomain) }}
{{- with .Values.config.allowedHosts }}{{ $names = append $names . }}{{ end }}
{{- join "," $names }}
{{- end }}
