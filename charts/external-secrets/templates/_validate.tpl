{{/*
Values this build cannot honour. Each stops the install with a message naming the key, rather
than being ignored: an upstream values file that relies on one of these features would
otherwise install an operator that silently lacks it.
*/}}
{{- define "external-secrets.validate" -}}
{{- $unsupported := list -}}
{{- if .Values.enableHTTP2 -}}
{{- $unsupported = append $unsupported "enableHTTP2=true: the metrics and webhook servers speak HTTP/1.1 only" -}}
{{- end -}}
{{- range $key, $metrics := dict "metrics" .Values.metrics "webhook.metrics" .Values.webhook.metrics "certController.metrics" .Values.certController.metrics -}}
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
