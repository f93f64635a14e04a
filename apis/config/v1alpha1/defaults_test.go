/*
Copyright 2026 The training-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetDefaults_Configuration(t *testing.T) {
	full := func() *Configuration {
		return &Configuration{
			TypeMeta:       metav1.TypeMeta{APIVersion: "config.training-operator.io/v1alpha1", Kind: "Configuration"},
			EnabledSchemes: []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"},
			GangScheduling: GangScheduling{SchedulerPluginsSchedulerName: "scheduler-plugins-scheduler"},
			Controller:     Controller{DefaultConcurrency: ptrTo[int32](16), CacheSyncTimeout: &metav1.Duration{Duration: 10 * time.Minute}, PodTracking: ptrTo(true)},
			ClientConnection: ClientConnection{
				QPS:                ptrTo[float32](500),
				Burst:              ptrTo[int32](1000),
				DisableCompression: ptrTo(true),
			},
			Webhook: Webhook{
				Port:           ptrTo[int32](9443),
				ServiceName:    "training-operator",
				SecretName:     "training-operator-webhook-cert",
				CertDir:        "/tmp/k8s-webhook-server/serving-certs",
				CertManagement: "self-signed",
			},
			Metrics: Metrics{BindAddress: ":8080"},
			Health:  Health{ProbeBindAddress: ":8081"},
			LeaderElection: LeaderElection{
				ResourceName:  "1ca428e5.training-operator.kubeflow.org",
				LeaseDuration: &metav1.Duration{Duration: 15 * time.Second},
				RenewDeadline: &metav1.Duration{Duration: 10 * time.Second},
				RetryPeriod:   &metav1.Duration{Duration: 2 * time.Second},
			},
			PyTorchInitContainer: PyTorchInitContainer{
				Image:        "alpine:3.10",
				TemplateFile: "/etc/config/initContainer.yaml",
				MaxTries:     ptrTo[int32](100),
			},
			MPI:   MPI{KubectlDeliveryImage: "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest"},
			Kueue: Kueue{Integration: KueueIntegrationBuiltin},
		}
	}
	custom := func() *Configuration {
		return &Configuration{
			TypeMeta:       metav1.TypeMeta{APIVersion: "config.training-operator.io/v1alpha1", Kind: "Configuration"},
			Namespace:      "ns",
			EnabledSchemes: []string{"TFJob"},
			GangScheduling: GangScheduling{SchedulerName: "volcano", SchedulerPluginsSchedulerName: "coscheduling"},
			Controller:     Controller{DefaultConcurrency: ptrTo[int32](1), Concurrency: map[string]int32{"TFJob": 2}, CacheSyncTimeout: &metav1.Duration{Duration: time.Minute}, PodTracking: ptrTo(true)},
			ClientConnection: ClientConnection{
				QPS:                ptrTo[float32](5),
				Burst:              ptrTo[int32](10),
				DisableCompression: ptrTo(false),
			},
			Webhook: Webhook{
				Port:           ptrTo[int32](443),
				Host:           "0.0.0.0",
				ServiceName:    "svc",
				SecretName:     "secret",
				CertDir:        "/certs",
				CertManagement: "none",
			},
			Metrics: Metrics{BindAddress: "0", Secure: true},
			Health:  Health{ProbeBindAddress: ":1"},
			LeaderElection: LeaderElection{
				LeaderElect:       true,
				ResourceName:      "lease",
				ResourceNamespace: "ns",
				LeaseDuration:     &metav1.Duration{Duration: time.Minute},
				RenewDeadline:     &metav1.Duration{Duration: 30 * time.Second},
				RetryPeriod:       &metav1.Duration{Duration: time.Second},
			},
			PyTorchInitContainer: PyTorchInitContainer{
				Image:        "busybox",
				TemplateFile: "/t",
				MaxTries:     ptrTo[int32](1),
			},
			MPI:   MPI{KubectlDeliveryImage: "delivery"},
			Kueue: Kueue{Integration: KueueIntegrationOperator, ConfigFile: "/etc/kueue/controller_manager_config.yaml"},
		}
	}
	cases := []struct {
		name string
		in   *Configuration
		want *Configuration
	}{
		{name: "empty", in: &Configuration{}, want: full()},
		{name: "already defaulted", in: full(), want: full()},
		{name: "set fields are kept", in: custom(), want: custom()},
		{
			name: "explicit zero numbers are kept for validation to reject",
			in: &Configuration{
				Controller:           Controller{DefaultConcurrency: ptrTo[int32](0)},
				ClientConnection:     ClientConnection{QPS: ptrTo[float32](0), Burst: ptrTo[int32](0)},
				Webhook:              Webhook{Port: ptrTo[int32](0)},
				PyTorchInitContainer: PyTorchInitContainer{MaxTries: ptrTo[int32](0)},
			},
			want: func() *Configuration {
				c := full()
				c.Controller.DefaultConcurrency = ptrTo[int32](0)
				c.ClientConnection.QPS = ptrTo[float32](0)
				c.ClientConnection.Burst = ptrTo[int32](0)
				c.Webhook.Port = ptrTo[int32](0)
				c.PyTorchInitContainer.MaxTries = ptrTo[int32](0)
				return c
			}(),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			SetDefaults_Configuration(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_Configuration (-want +got):\n%s", diff)
			}
			again := got.DeepCopy()
			SetDefaults_Configuration(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("SetDefaults_Configuration is not idempotent (-first +second):\n%s", diff)
			}
		})
	}
}

func TestAllSchemesReturnsACopy(t *testing.T) {
	a := AllSchemes()
	a[0] = "changed"
	if got := AllSchemes()[0]; got != SchemePyTorchJob {
		t.Errorf("AllSchemes()[0] = %q after mutating an earlier result, want %q", got, SchemePyTorchJob)
	}
}
