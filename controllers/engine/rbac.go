package engine

// RBAC for the job engine, generated into config/rbac/role.yaml; each
// adapter package carries the rules on its own job kind.
// +kubebuilder:rbac:groups="",resources=pods;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list
// A whole-job restart reads the node of a pod stuck terminating past the
// lost-pod timeout, to force-delete it only if the node is lost.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
