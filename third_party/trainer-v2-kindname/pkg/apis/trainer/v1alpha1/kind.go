// Package v1alpha1 holds the names Kueue's jobframework reads from Trainer
// v2's API, with Trainer's values; nothing else of that API is used.
package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// SchemeGroupVersion is Trainer v2's API group and version.
var SchemeGroupVersion = schema.GroupVersion{Group: "trainer.kubeflow.org", Version: "v1alpha1"}

// TrainJobKind is Trainer v2's job kind.
const TrainJobKind = "TrainJob"
