package kueue

// RBAC of the Kueue integration, generated into config/rbac/kueue/role.yaml
// (a ClusterRole of its own, which the chart grants only with
// kueue.integration=operator): Workloads, the Kueue objects jobframework
// reads to start a job (flavors, topologies, priority classes) and the
// webhook's queue defaulting reads (LocalQueues, ClusterQueues,
// AdmissionChecks, Namespaces), and on the jobs themselves the suspend and
// template patches and the read of a finished job.
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/finalizers,verbs=update
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues;clusterqueues;admissionchecks;resourceflavors;workloadpriorityclasses;topologies,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs;tfjobs;mpijobs;xgboostjobs;paddlejobs;jaxjobs,verbs=get;patch
