package mpi

// RBAC for the engine's work on MPIJobs, generated into
// config/rbac/role.yaml: it watches the jobs, deletes them at their TTL and
// patches their status; children it creates with blockOwnerDeletion need
// update on the jobs' finalizers (OwnerReferencesPermissionEnforcement).
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/status,verbs=patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/finalizers,verbs=update

// RBAC for the MPIJob adapter's children, generated into
// config/rbac/role.yaml; the engine makes, adopts (get, patch) and repairs
// them. The operator must itself hold what the launcher Role grants (pods
// get, list, watch and pods/exec create), or the API server refuses to
// create that Role.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/exec,verbs=create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;patch;delete
