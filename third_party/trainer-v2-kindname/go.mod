// The one name Kueue's jobframework imports from Trainer v2's API (a kind
// name, in its list of prebuilt-workload kinds). Trainer v2's API module does
// not build on k8s.io v0.37; go.mod replaces it with this module.
module github.com/kubeflow/trainer/v2

go 1.26.0

require k8s.io/apimachinery v0.37.2
