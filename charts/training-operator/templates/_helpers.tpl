{{/*
Fixed object names: v1 compatibility (Deployment "training-operator", the
webhook Service name is part of the serving certificate's DNS names).
*/}}
{{- define "training-operator.name" -}}training-operator{{- end -}}

{{/* Selector labels: v1's, so that the Deployment selector stays the same. */}}
{{- define "training-operator.selectorLabels" -}}
control-plane: kubeflow-training-operator
{{- end -}}

{{- define "training-operator.labels" -}}
{{ include "training-operator.selectorLabels" . }}
app.kubernetes.io/name: training-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "training-operator.image" -}}
{{- $img := .Values.image -}}
{{- if $img.digest -}}
{{ $img.repository }}@{{ $img.digest }}
{{- else -}}
{{ $img.repository }}:{{ default .Chart.AppVersion $img.tag }}
{{- end -}}
{{- end -}}

{{- define "training-operator.leaderElect" -}}
{{- if kindIs "bool" .Values.leaderElection.enabled -}}
{{ .Values.leaderElection.enabled }}
{{- else -}}
{{ gt (int .Values.replicas) 1 }}
{{- end -}}
{{- end -}}

{{/* The namespace the operator watches, "" for all. */}}
{{- define "training-operator.watchNamespace" -}}
{{ .Values.watchNamespace }}
{{- end -}}

{{- define "training-operator.certDir" -}}/tmp/k8s-webhook-server/serving-certs{{- end -}}

{{- define "training-operator.certificateName" -}}training-operator-serving-cert{{- end -}}

{{/*
Plural resources of every kind, as a JSON list, from files/kinds.yaml
(generated from the operator's table of kinds by make chart-sync).
*/}}
{{- define "training-operator.allResources" -}}
{{- $out := list -}}
{{- range (.Files.Get "files/kinds.yaml" | fromYaml).kinds -}}
{{- $out = append $out .plural -}}
{{- end -}}
{{ toJson $out }}
{{- end -}}

{{/*
Plural resources of the enabled kinds, as a JSON list (every kind when
enabledSchemes is empty).
*/}}
{{- define "training-operator.enabledResources" -}}
{{- $plural := dict -}}
{{- range (.Files.Get "files/kinds.yaml" | fromYaml).kinds -}}
{{- $_ := set $plural (lower .kind) .plural -}}
{{- end -}}
{{- $out := list -}}
{{- range .Values.enabledSchemes -}}
{{- $out = append $out (get $plural (lower .)) -}}
{{- end -}}
{{- if not $out }}{{ $out = include "training-operator.allResources" $ | fromJsonArray }}{{ end -}}
{{ toJson (uniq $out) }}
{{- end -}}

{{/*
The operator Configuration (config.training-operator.io/v1alpha1), decoded
strictly by the operator: only fields of that API.
*/}}
{{- define "training-operator.configuration" -}}
{{- $v := .Values -}}
{{- $c := dict "apiVersion" "config.training-operator.io/v1alpha1" "kind" "Configuration" -}}
{{- with $v.watchNamespace }}{{ $_ := set $c "namespace" . }}{{ end -}}
{{- with $v.enabledSchemes }}{{ $_ := set $c "enabledSchemes" . }}{{ end -}}
{{- $gs := dict -}}
{{- with $v.gangScheduling.schedulerName }}{{ $_ := set $gs "schedulerName" . }}{{ end -}}
{{- with $v.gangScheduling.schedulerPluginsSchedulerName }}{{ $_ := set $gs "schedulerPluginsSchedulerName" . }}{{ end -}}
{{- with $v.gangScheduling.podGroupAPI }}{{ $_ := set $gs "podGroupAPI" . }}{{ end -}}
{{- with $v.gangScheduling.podGroupAPIs }}{{ $_ := set $gs "podGroupAPIs" . }}{{ end -}}
{{- with $gs }}{{ $_ := set $c "gangScheduling" . }}{{ end -}}
{{- $ctl := dict -}}
{{- if not (kindIs "invalid" $v.controller.defaultConcurrency) }}{{ $_ := set $ctl "defaultConcurrency" (int $v.controller.defaultConcurrency) }}{{ end -}}
{{- with $v.controller.concurrency }}{{ $_ := set $ctl "concurrency" . }}{{ end -}}
{{- with $v.controller.cacheSyncTimeout }}{{ $_ := set $ctl "cacheSyncTimeout" . }}{{ end -}}
{{- if eq $v.controller.podTracking false }}{{ $_ := set $ctl "podTracking" false }}{{ end -}}
{{- with $ctl }}{{ $_ := set $c "controller" . }}{{ end -}}
{{- $cc := dict -}}
{{- if not (kindIs "invalid" $v.clientConnection.qps) }}{{ $_ := set $cc "qps" $v.clientConnection.qps }}{{ end -}}
{{- if not (kindIs "invalid" $v.clientConnection.burst) }}{{ $_ := set $cc "burst" (int $v.clientConnection.burst) }}{{ end -}}
{{- if not (kindIs "invalid" $v.clientConnection.disableCompression) }}{{ $_ := set $cc "disableCompression" $v.clientConnection.disableCompression }}{{ end -}}
{{- with $cc }}{{ $_ := set $c "clientConnection" . }}{{ end -}}
{{- $_ := set $c "webhook" (dict
      "port" (int $v.webhook.port)
      "serviceName" (include "training-operator.name" .)
      "secretName" $v.webhook.secretName
      "certDir" (include "training-operator.certDir" .)
      "certManagement" $v.webhook.certManagement) -}}
{{- $_ := set $c "metrics" (dict "bindAddress" (printf ":%d" (int $v.metrics.port)) "secure" $v.metrics.secure) -}}
{{- $_ := set $c "health" (dict "probeBindAddress" ":8081") -}}
{{- $le := dict "leaderElect" (eq (include "training-operator.leaderElect" .) "true") -}}
{{- with $v.leaderElection.resourceName }}{{ $_ := set $le "resourceName" . }}{{ end -}}
{{- $_ := set $c "leaderElection" $le -}}
{{- $pic := dict -}}
{{- with $v.pytorchInitContainer.image }}{{ $_ := set $pic "image" . }}{{ end -}}
{{- if not (kindIs "invalid" $v.pytorchInitContainer.maxTries) }}{{ $_ := set $pic "maxTries" (int $v.pytorchInitContainer.maxTries) }}{{ end -}}
{{- with $pic }}{{ $_ := set $c "pytorchInitContainer" . }}{{ end -}}
{{- with $v.mpi.kubectlDeliveryImage }}{{ $_ := set $c "mpi" (dict "kubectlDeliveryImage" .) }}{{ end -}}
{{- if eq (include "training-operator.kueueOperator" .) "true" -}}
{{- $kq := dict "integration" "operator" -}}
{{- with $v.kueue.config }}{{ $_ := set $kq "configFile" "/etc/training-operator/kueue-config.yaml" }}{{ end -}}
{{- $_ := set $c "kueue" $kq -}}
{{- end -}}
{{ toYaml $c }}
{{- end -}}

{{/*
RBAC rules generated from config/rbac/role.yaml (files/rbac-rules.yaml, make
chart-sync), selected for the certificate mode and the enabled kinds. Returns a dict with
"cluster" (ClusterRole), "jobs" (ClusterRole, or a Role in watchNamespace)
and "operator" (Role in the release namespace) rule lists, as JSON.
*/}}
{{- define "training-operator.rules" -}}
{{- $g := .Files.Get "files/rbac-rules.yaml" | fromYaml -}}
{{- $selfSigned := eq .Values.webhook.certManagement "self-signed" -}}
{{- /* The generated rules name the default Lease; grant the configured one. */ -}}
{{- $operator := list -}}
{{- range $g.operatorNamespace | default list -}}
{{- if and (has "leases" .resources) .resourceNames $.Values.leaderElection.resourceName -}}
{{- $operator = append $operator (set (deepCopy .) "resourceNames" (list $.Values.leaderElection.resourceName)) -}}
{{- else -}}
{{- $operator = append $operator . -}}
{{- end -}}
{{- end -}}
{{- if $selfSigned }}
{{- /* The generated rules name the default Secret; grant the configured one. */ -}}
{{- $secret := list -}}
{{- range $g.certificateSecret | default list }}{{ $secret = append $secret (set (deepCopy .) "resourceNames" (list $.Values.webhook.secretName)) }}{{ end -}}
{{- $operator = concat $secret $operator }}
{{- end -}}
{{- /* Each enabled kind's own rules (all kinds when enabledSchemes is empty). */ -}}
{{- $jobs := $g.jobNamespaces | default list -}}
{{- $kindCluster := list -}}
{{- $enabled := list -}}
{{- range .Values.enabledSchemes }}{{ $enabled = append $enabled (lower .) }}{{ end -}}
{{- range (.Files.Get "files/kinds.yaml" | fromYaml).kinds -}}
{{- if or (not $enabled) (has (lower .kind) $enabled) -}}
{{- $k := get ($g.kinds | default dict) .kind | default dict -}}
{{- $jobs = concat $jobs ($k.jobNamespaces | default list) -}}
{{- $kindCluster = concat $kindCluster ($k.cluster | default list) -}}
{{- end -}}
{{- end -}}
{{- /* Each enabled gang backend's own rules (all when podGroupAPIs is empty). */ -}}
{{- $backends := .Values.gangScheduling.podGroupAPIs | default list -}}
{{- $gangRules := $g.gangBackends | default dict -}}
{{- range $api := keys $gangRules | sortAlpha -}}
{{- if or (not $backends) (has $api $backends) -}}
{{- $b := get $gangRules $api -}}
{{- $jobs = concat $jobs ($b.jobNamespaces | default list) -}}
{{- $kindCluster = concat $kindCluster ($b.cluster | default list) -}}
{{- end -}}
{{- end -}}
{{- $selfSignedRules := list -}}
{{- if $selfSigned }}{{ $selfSignedRules = $g.webhookConfigurations | default list }}{{ end -}}
{{- $cluster := concat ($g.cluster | default list) $kindCluster $selfSignedRules -}}
{{- toJson (dict "cluster" $cluster "jobs" $jobs "operator" $operator) -}}
{{- end -}}

{{/*
"true" when the operator manages Kueue Workloads (kueue.integration=operator).
*/}}
{{- define "training-operator.kueueOperator" -}}
{{- eq ((.Values.kueue | default dict).integration | default "builtin") "operator" -}}
{{- end -}}
