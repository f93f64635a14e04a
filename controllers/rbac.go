package controllers

// RBAC for the job engine and its adapters, generated into config/rbac/role.yaml.
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs;tfjobs;mpijobs;xgboostjobs;paddlejobs;jaxjobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/status;tfjobs/status;mpijobs/status;xgboostjobs/status;paddlejobs/status;jaxjobs/status,verbs=patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/finalizers;tfjobs/finalizers;mpijobs/finalizers;xgboostjobs/finalizers;paddlejobs/finalizers;jaxjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update
