{{/* The standard OTEL_* variables the binary reads (observability/otlp.go, tracing.go). */}}
{{- define "mockgateway.otelEnv" -}}
{{- $o := .Values.otel }}
{{- if $o.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $o.endpoint | quote }}
{{- end }}
{{- if $o.protocol }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $o.protocol | quote }}
{{- end }}
{{- if $o.headersSecret.name }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ $o.headersSecret.name }}
      key: {{ $o.headersSecret.key }}
{{- end }}
{{- if $o.serviceName }}
- name: OTEL_SERVICE_NAME
  value: {{ $o.serviceName | quote }}
{{- end }}
{{- $attrs := list }}
{{- if $o.kubernetesAttributes }}
- name: K8S_POD_NAME
  valueFrom:
    fieldRef: {fieldPath: metadata.name}
- name: K8S_NAMESPACE_NAME
  valueFrom:
    fieldRef: {fieldPath: metadata.namespace}
- name: K8S_NODE_NAME
  valueFrom:
    fieldRef: {fieldPath: spec.nodeName}
{{- /* $(VAR) is expanded by the kubelet from the variables defined above. */}}
{{- $attrs = list "k8s.pod.name=$(K8S_POD_NAME)" "k8s.namespace.name=$(K8S_NAMESPACE_NAME)" "k8s.node.name=$(K8S_NODE_NAME)" }}
{{- end }}
{{- range $k, $v := $o.resourceAttributes }}
{{- $attrs = append $attrs (printf "%s=%s" $k (toString $v)) }}
{{- end }}
{{- if $attrs }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attrs | quote }}
{{- end }}
{{- end }}
