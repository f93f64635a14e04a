package controllers

// RBAC for the job engine, generated into config/rbac/role.yaml; each
// adapter package carries the rules on its own job kind.
// +kubebuilder:rbac:groups="",resources=pods;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list
// A whole-job restart reads the node of a pod stuck terminating past the
// lost-pod timeout, to force-delete it only if the node is lost.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
//
// The leader-election Lease: get and update name the default Lease (the
// chart grants the one it configures); create cannot be named, and is
// bounded by the Role it is generated into, in the operator's namespace
// only (hack/chart).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,resourceNames=1ca428e5.training-operator.kubeflow.org
