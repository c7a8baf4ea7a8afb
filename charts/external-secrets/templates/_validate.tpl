{{/*
Values this build cannot honour. Each stops the install with a message naming the key, rather
than being ignored: an upstream values file that relies on one of these features would
otherwise install an operator that silently lacks it.
*/}}
{{- define "external-secrets.validate" -}}
{{- $unsupported := list -}}
{{- if .Values.crds.conversion.enabled -}}
{{- $unsupported = append $unsupported "crds.conversion.enabled=true: the CRDs have no conversion webhook (v1alpha1 is not served)" -}}
{{- end -}}
{{- if .Values.extendedMetricLabels -}}
{{- $unsupported = append $unsupported "extendedMetricLabels=true: metrics carry no Kubernetes recommended labels yet" -}}
{{- end -}}
{{- if .Values.enableHTTP2 -}}
{{- $unsupported = append $unsupported "enableHTTP2=true: the metrics and webhook servers speak HTTP/1.1 only" -}}
{{- end -}}
{{- if .Values.vault.enableTokenCache -}}
{{- $unsupported = append $unsupported "vault.enableTokenCache=true: the Vault provider keeps no token cache" -}}
{{- end -}}
{{- range $key, $image := dict "image" .Values.image "webhook.image" .Values.webhook.image "certController.image" .Values.certController.image -}}
{{- if $image.flavour -}}
{{- $unsupported = append $unsupported (printf "%s.flavour=%q: one image flavour is published, leave it empty" $key $image.flavour) -}}
{{- end -}}
{{- end -}}
{{- range $key, $metrics := dict "metrics" .Values.metrics "webhook.metrics" .Values.webhook.metrics "certController.metrics" .Values.certController.metrics -}}
{{- if $metrics.listen.auth.enabled -}}
{{- $unsupported = append $unsupported (printf "%s.listen.auth.enabled=true: metrics are served without authentication" $key) -}}
{{- end -}}
{{- if and $metrics.listen.secure.enabled (ne $key "metrics") -}}
{{- $unsupported = append $unsupported (printf "%s.listen.secure.enabled=true: only the controller serves metrics over HTTPS" $key) -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.processPushSecret) .Values.processClusterPushSecret -}}
{{- $unsupported = append $unsupported "processClusterPushSecret=true with processPushSecret=false: ClusterPushSecrets work through PushSecrets, turn both off" -}}
{{- end -}}
{{- if not (has .Values.global.compatibility.openshift.adaptSecurityContext (list "auto" "force" "disabled")) -}}
{{- $unsupported = append $unsupported (printf "global.compatibility.openshift.adaptSecurityContext=%q: expected auto, force or disabled" .Values.global.compatibility.openshift.adaptSecurityContext) -}}
{{- end -}}
{{- with $unsupported -}}
{{- fail (printf "values not supported by this chart:\n- %s" (join "\n- " .)) -}}
{{- end -}}
{{- end }}
