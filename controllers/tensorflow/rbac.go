package tensorflow

// RBAC for the engine's work on TFJobs, generated into
// config/rbac/role.yaml: it watches the jobs, deletes them at their TTL and
// patches their status; children it creates with blockOwnerDeletion need
// update on the jobs' finalizers (OwnerReferencesPermissionEnforcement).
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs/status,verbs=patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs/finalizers,verbs=update
