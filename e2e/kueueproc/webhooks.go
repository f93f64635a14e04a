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

package kueueproc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Webhooks registers a Kueue process's admission webhooks by URL.
type Webhooks struct {
	// Name of the two webhook configurations.
	Name string
	// Manifests is Kueue's manifests folder (webhook.yaml).
	Manifests string
	// Addr is the process's webhook host:port; CA signs its certificate.
	Addr string
	CA   []byte
	// Scope, when set, limits the webhooks on our kinds to the namespaces
	// it selects.
	Scope *metav1.LabelSelector
}

// Register installs Kueue's webhook manifests with URLs to the local Kueue
// and its CA, keeping only what this Kueue serves: its own API and, while
// its own integrations run (mode), our kubeflow.org/v1 kinds.
func (w Webhooks) Register(ctx context.Context, c client.Client, mode Mode) error {
	data, err := os.ReadFile(filepath.Join(w.Manifests, "webhook.yaml"))
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		raw, err := u.MarshalJSON()
		if err != nil {
			return err
		}
		var obj client.Object
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			var cfg admissionv1.MutatingWebhookConfiguration
			if err := utilyaml.Unmarshal(raw, &cfg); err != nil {
				return err
			}
			cfg.Webhooks = keep(w, mode, cfg.Webhooks, func(h *admissionv1.MutatingWebhook) (*admissionv1.WebhookClientConfig, **metav1.LabelSelector) {
				return &h.ClientConfig, &h.NamespaceSelector
			})
			obj = &cfg
		case "ValidatingWebhookConfiguration":
			var cfg admissionv1.ValidatingWebhookConfiguration
			if err := utilyaml.Unmarshal(raw, &cfg); err != nil {
				return err
			}
			cfg.Webhooks = keep(w, mode, cfg.Webhooks, func(h *admissionv1.ValidatingWebhook) (*admissionv1.WebhookClientConfig, **metav1.LabelSelector) {
				return &h.ClientConfig, &h.NamespaceSelector
			})
			obj = &cfg
		default:
			continue
		}
		obj.SetName(w.Name)
		obj.SetNamespace("")
		obj.SetLabels(nil)
		obj.SetAnnotations(nil)
		if err := upsert(ctx, c, obj); err != nil {
			return err
		}
	}
}

// keep returns the hooks this Kueue serves, pointed at its URL with its CA:
// those of its own API and, while its own integrations run, those of our
// kubeflow.org/v1 kinds (limited to w.Scope when set).
func keep[H any](w Webhooks, mode Mode, hooks []H, fields func(*H) (*admissionv1.WebhookClientConfig, **metav1.LabelSelector)) []H {
	var out []H
	for _, h := range hooks {
		cc, scope := fields(&h)
		path := ptr.Deref(cc.Service.Path, "/")
		ours := strings.Contains(path, "-kubeflow-org-v1-")
		if !strings.Contains(path, "-kueue-x-k8s-io-") && (!ours || !mode.BuiltinOn()) {
			continue
		}
		url := "https://" + w.Addr + path
		cc.Service, cc.URL, cc.CABundle = nil, &url, w.CA
		if ours && w.Scope != nil {
			*scope = w.Scope
		}
		out = append(out, h)
	}
	return out
}

// Unregister removes the webhook configurations, so that nothing is left
// calling a stopped Kueue.
func (w Webhooks) Unregister(ctx context.Context, c client.Client) error {
	for _, o := range []client.Object{
		&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: w.Name}},
		&admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: w.Name}},
	} {
		if err := client.IgnoreNotFound(c.Delete(ctx, o)); err != nil {
			return err
		}
	}
	return nil
}

func upsert(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		existing := obj.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
			return err
		}
		obj.SetResourceVersion(existing.GetResourceVersion())
		err = c.Update(ctx, obj)
	}
	return err
}
