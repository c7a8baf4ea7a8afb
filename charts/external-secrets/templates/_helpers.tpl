{{/*
Names, labels and pod spec pieces shared by the controller, webhook and cert controller. The names
are upstream's, so objects, Services and ServiceAccounts keep the names existing clusters and
policies refer to.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "external-secrets.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: fullnameOverride, else release and chart name (once if one holds the other). */}}
{{- define "external-secrets.fullname" -}}
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

{{/*
The full name with a suffix, shortened first so the result stays a 63-character DNS label
(Service names). Usage: include "external-secrets.componentName" (list . "-webhook")
*/}}
{{- define "external-secrets.componentName" -}}
{{- $root := index . 0 -}}
{{- $suffix := index . 1 -}}
{{- $room := int (sub 63 (len $suffix)) -}}
{{- printf "%s%s" (include "external-secrets.fullname" $root | trunc $room | trimSuffix "-") $suffix -}}
{{- end -}}

{{/* Namespace of the namespaced objects. */}}
{{- define "external-secrets.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{/* The helm.sh/chart label value. */}}
{{- define "external-secrets.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The webhook's certificate Secret (also the cert-manager Certificate's secretName). */}}
{{- define "external-secrets.webhookSecretName" -}}
{{- include "external-secrets.fullname" . }}-webhook
{{- end }}

{{/*
Selector labels of one component. Argument: dict "root" $ "suffix" ("" for the controller,
"-webhook", "-cert-controller").
*/}}
{{- define "external-secrets.selectorLabels" -}}
app.kubernetes.io/name: {{ include "external-secrets.name" .root }}{{ .suffix }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{/* All labels of one component's objects. Argument as for selectorLabels. */}}
{{- define "external-secrets.labels" -}}
helm.sh/chart: {{ include "external-secrets.chart" .root }}
{{ include "external-secrets.selectorLabels" . }}
{{- with .root.Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The components the chart can deploy, as YAML: for each, its suffix, whether it is deployed and
the key of its values ("" for the top level). Read with fromYaml.
*/}}
{{- define "external-secrets.components" -}}
controller:
  suffix: ""
  enabled: {{ .Values.createOperator }}
  key: ""
webhook:
  suffix: "-webhook"
  enabled: {{ .Values.webhook.create }}
  key: webhook
certController:
  suffix: "-cert-controller"
  enabled: {{ and .Values.certController.create (not .Values.webhook.certManager.enabled) }}
  key: certController
{{- end }}

{{/*
Name of a component's ServiceAccount; upstream's fixed default names for the webhook and cert
controller. Argument: dict "root" $ "key".
*/}}
{{- define "external-secrets.serviceAccountName" -}}
{{- $values := ternary .root.Values (index .root.Values .key) (eq .key "") -}}
{{- $default := ternary (include "external-secrets.fullname" .root) (printf "external-secrets-%s" (.key | kebabcase)) (eq .key "") -}}
{{- if $values.serviceAccount.create }}
{{- default $default $values.serviceAccount.name }}
{{- else }}
{{- default "default" $values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference, `<repository>:<tag>[-<flavour>]` as upstream's chart builds it.
Argument: dict "root" $ "image" (a component's image values). */}}
{{- define "external-secrets.image" -}}
{{- $repository := default .image.repository .root.Values.global.repository -}}
{{- $tag := default .root.Chart.AppVersion .image.tag -}}
{{- if .image.flavour -}}
{{- printf "%s:%s-%s" $repository $tag .image.flavour -}}
{{- else -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}
{{- end }}

{{/*
A `securityContext:` block from pod or container security context values: nothing when
`enabled` is false or nothing else is set; without the fields OpenShift assigns itself when
global.compatibility.openshift.adaptSecurityContext says so. Argument: dict "root" $ "context".
*/}}
{{- define "external-secrets.securityContext" -}}
{{- $context := omit (.context | default dict) "enabled" -}}
{{- $mode := .root.Values.global.compatibility.openshift.adaptSecurityContext -}}
{{- $openshift := .root.Capabilities.APIVersions.Has "security.openshift.io/v1" -}}
{{- if or (eq $mode "force") (and (eq $mode "auto") $openshift) -}}
{{- $context = omit $context "fsGroup" "runAsUser" "runAsGroup" -}}
{{- end -}}
{{- if and (.context | default dict).enabled $context }}
securityContext:
  {{- toYaml $context | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The metrics server flags every component takes alike: where metrics listen, --metrics-auth,
--metrics-secure with the certificate (file names relative to certDir, so full paths as
upstream's values give them work too) and --enable-http2. Argument: (dict "listen"
<component>.metrics.listen "http2" .Values.enableHTTP2).
*/}}
{{- define "external-secrets.metricsArgs" -}}
- --metrics-addr=:{{ .listen.port }}
{{- if .listen.auth.enabled }}
- --metrics-auth=true
{{- end }}
{{- with .listen.secure }}
{{- if .enabled }}
- --metrics-secure=true
- --metrics-cert-dir={{ .certDir }}
- --metrics-cert-name={{ base .certFile }}
- --metrics-key-name={{ base .keyFile }}
{{- end }}
{{- end }}
{{- if .http2 }}
- --enable-http2=true
{{- end }}
{{- end }}

{{/*
`--name=value` per entry of an extraArgs map, `--name` for an empty value. Argument: the map.
*/}}
{{- define "external-secrets.extraArgs" -}}
{{- range $name, $value := . }}
{{- if $value }}
- --{{ $name }}={{ $value }}
{{- else }}
- --{{ $name }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Pod metadata: annotations and labels, the component's own or else the global ones. Argument:
dict "root" $ "values" (the component's values) "suffix".
*/}}
{{- define "external-secrets.podMetadata" -}}
{{- with .values.podAnnotations | default .root.Values.global.podAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
labels:
  {{- include "external-secrets.labels" . | nindent 2 }}
  {{- with .values.podLabels | default .root.Values.global.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/*
The pod spec fields every component shares, before its containers: pull secrets, ServiceAccount,
host settings and the pod security context. Argument: dict "root" $ "values" "key".
*/}}
{{- define "external-secrets.podIdentity" -}}
{{- with .values.imagePullSecrets | default .root.Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
serviceAccountName: {{ include "external-secrets.serviceAccountName" . }}
automountServiceAccountToken: {{ .values.serviceAccount.automount }}
hostNetwork: {{ .values.hostNetwork }}
{{- if and (kindIs "bool" .values.hostUsers) (semverCompare ">= 1.33-0" .root.Capabilities.KubeVersion.Version) }}
hostUsers: {{ .values.hostUsers }}
{{- end }}
{{- include "external-secrets.securityContext" (dict "root" .root "context" .values.podSecurityContext) }}
{{- end }}

{{/*
Container fields after the probes: environment (the pod name first, which the binary reports
events and leader identity with), resources and volume mounts. Argument: dict "values"
"mounts" (mounts the chart adds itself).
*/}}
{{- define "external-secrets.containerTail" -}}
env:
  - name: POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  {{- with .values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .values.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with concat (.mounts | default list) (.values.extraVolumeMounts | default list) }}
volumeMounts:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Pod spec fields after the containers: init containers, volumes and placement, the component's
own or else the global ones. Argument: dict "root" $ "values" "suffix" "volumes" (volumes the
chart adds itself).
*/}}
{{- define "external-secrets.podPlacement" -}}
{{- with .values.extraInitContainers }}
initContainers:
  {{- tpl (toYaml .) $.root | nindent 2 }}
{{- end }}
{{- with concat (.volumes | default list) (.values.extraVolumes | default list) }}
volumes:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.hostAliases | default .root.Values.global.hostAliases }}
hostAliases:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector | default .root.Values.global.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity | default .root.Values.global.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations | default .root.Values.global.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints | default .root.Values.global.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- range $constraint := . }}
  {{- if not $constraint.labelSelector }}
  {{- $constraint = merge (dict "labelSelector" (dict "matchLabels" (include "external-secrets.selectorLabels" $ | fromYaml))) $constraint }}
  {{- end }}
  - {{ toYaml $constraint | nindent 4 | trim }}
  {{- end }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.schedulerName }}
schedulerName: {{ . | quote }}
{{- end }}
{{- with .values.runtimeClassName }}
runtimeClassName: {{ . | quote }}
{{- end }}
{{- end }}

{{/*
An HTTP probe of the webhook or cert controller. Argument: dict "probe" (its values) "port"
(the port to probe) "path".
*/}}
{{- define "external-secrets.httpProbe" -}}
httpGet:
  port: {{ .port }}
  path: {{ .path }}
initialDelaySeconds: {{ .probe.initialDelaySeconds }}
periodSeconds: {{ .probe.periodSeconds }}
{{- with .probe.timeoutSeconds }}
timeoutSeconds: {{ . }}
{{- end }}
failureThreshold: {{ .probe.failureThreshold }}
{{- with .probe.successThreshold }}
successThreshold: {{ . }}
{{- end }}
{{- end }}

{{/*
The probes of the webhook or cert controller: liveness on livenessProbe.port, readiness and
startup on the `ready` port. Argument: the component's values.
*/}}
{{- define "external-secrets.healthProbes" -}}
{{- if .livenessProbe.enabled }}
livenessProbe:
  {{- include "external-secrets.httpProbe" (dict "probe" .livenessProbe "port" .livenessProbe.port "path" "/healthz") | nindent 2 }}
{{- end }}
{{- if .readinessProbe.enabled }}
readinessProbe:
  {{- include "external-secrets.httpProbe" (dict "probe" .readinessProbe "port" "ready" "path" "/readyz") | nindent 2 }}
{{- end }}
{{- if .startupProbe.enabled }}
startupProbe:
  {{- include "external-secrets.httpProbe" (dict "probe" .startupProbe "port" "ready" "path" "/readyz") | nindent 2 }}
{{- end }}
{{- end }}

{{/* ipFamilyPolicy and ipFamilies of every Service. */}}
{{- define "external-secrets.serviceIpFamilies" -}}
{{- with .Values.service.ipFamilyPolicy }}
ipFamilyPolicy: {{ . }}
{{- end }}
{{- with .Values.service.ipFamilies }}
ipFamilies:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Whether ServiceMonitors are rendered ("true"/"false"), per serviceMonitor.renderMode and whether
the cluster serves monitoring.coreos.com/v1 ServiceMonitor.
*/}}
{{- define "external-secrets.renderServiceMonitors" -}}
{{- $served := .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" -}}
{{- $mode := .Values.serviceMonitor.renderMode | default "skipIfMissing" -}}
{{- if not .Values.serviceMonitor.enabled -}}
false
{{- else if eq $mode "alwaysRender" -}}
true
{{- else if eq $mode "skipIfMissing" -}}
{{ $served }}
{{- else if eq $mode "failIfMissing" -}}
{{- if not $served }}{{ fail "serviceMonitor.renderMode=failIfMissing: the cluster does not serve monitoring.coreos.com/v1 ServiceMonitor (install the Prometheus Operator CRDs first)" }}{{ end -}}
true
{{- else -}}
{{- fail (printf "serviceMonitor.renderMode: %q is not one of skipIfMissing, failIfMissing, alwaysRender" $mode) -}}
{{- end -}}
{{- end }}
