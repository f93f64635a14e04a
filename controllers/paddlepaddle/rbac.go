package paddlepaddle

// RBAC for the engine's work on PaddleJobs, generated into
// config/rbac/role.yaml: it watches the jobs, deletes them at their TTL and
// patches their status; children it creates with blockOwnerDeletion need
// update on the jobs' finalizers (OwnerReferencesPermissionEnforcement).
// +kubebuilder:rbac:groups=kubeflow.org,resources=paddlejobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=paddlejobs/status,verbs=patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=paddlejobs/finalizers,verbs=update
