package mpi

// RBAC for the MPIJob adapter, generated into config/rbac/role.yaml. The
// operator must itself hold what the launcher Role grants (pods get, list,
// watch and pods/exec create), or the API server refuses to create that Role.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=list;watch;create
// +kubebuilder:rbac:groups="",resources=pods/exec,verbs=create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=list;watch;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=list;watch;create;update;delete
