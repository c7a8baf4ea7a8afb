{{/*
Values this build cannot honour. Each stops the install with a message naming the key, rather
than being ignored: an upstream values file that relies on one of these features would
otherwise install an operator that silently lacks it.
*/}}
{{- define "external-secrets.validate" -}}
{{- $unsupported := list -}}
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
