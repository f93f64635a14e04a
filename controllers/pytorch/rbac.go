package pytorch

// RBAC for the engine's work on PyTorchJobs, generated into
// config/rbac/role.yaml: it watches the jobs, deletes them at their TTL and
// patches their status; children it creates with blockOwnerDeletion need
// update on the jobs' finalizers (OwnerReferencesPermissionEnforcement).
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/status,verbs=patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/finalizers,verbs=update
//
// Elastic PyTorchJobs own a HorizontalPodAutoscaler (no other kind does).
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
