package controller_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

var _ = Describe("Operator start", func() {
	// The manager syncs the informers that exist when it starts before it
	// starts the controllers; one a controller created itself was listed
	// only after all of those, so a restart took the sum of the listings.
	It("creates the informer of every watched type before the manager starts", func(ctx context.Context) {
		mgr, err := util.NewOperatorManager(restCfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		for _, list := range []client.ObjectList{
			&kubeflowv1.PyTorchJobList{}, &kubeflowv1.TFJobList{}, &kubeflowv1.MPIJobList{},
			&kubeflowv1.XGBoostJobList{}, &kubeflowv1.PaddleJobList{}, &kubeflowv1.JAXJobList{},
			&corev1.PodList{}, &autoscalingv2.HorizontalPodAutoscalerList{},
			&corev1.ConfigMapList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{},
		} {
			// Not started, a cached type answers ErrCacheNotStarted; one
			// without an informer, ErrResourceNotCached.
			err := mgr.GetCache().List(ctx, list)
			var notStarted *cache.ErrCacheNotStarted
			Expect(errors.As(err, &notStarted)).To(BeTrue(), "%T: %v", list, err)
		}
	})
})
