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

package cert

import (
	"context"
	"errors"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileWebhookConfigurations updates both webhook configurations and
// creates one this process has never seen, so an out-of-cluster run (make
// dev) gets working webhooks for the enabled kinds; one deleted after it was
// seen waits for a re-install (installs grant no create).
func (p *Provider) reconcileWebhookConfigurations(ctx context.Context, caBundle []byte) error {
	wh := p.opts.Webhooks
	var errs []error
	var err error
	for range maxWriteAttempts {
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		err = p.updateConfiguration(ctx, wh.MutatingName, &cfg, func() bool {
			out := reconcileEntries(cfg.Webhooks, wh.Mutating, wh.Managed, p.clientConfigSetter(caBundle),
				func(w *admissionregistrationv1.MutatingWebhook) entry {
					return entry{w.Name, &w.ClientConfig, &w.NamespaceSelector, &w.TimeoutSeconds}
				})
			if equality.Semantic.DeepEqual(out, cfg.Webhooks) {
				return false
			}
			cfg.Webhooks = out
			return true
		})
		if !apierrors.IsConflict(err) {
			break
		}
	}
	// A bundle is published only if both writes succeeded (also after the
	// last conflict).
	errs = append(errs, err)
	for range maxWriteAttempts {
		var cfg admissionregistrationv1.ValidatingWebhookConfiguration
		err = p.updateConfiguration(ctx, wh.ValidatingName, &cfg, func() bool {
			out := reconcileEntries(cfg.Webhooks, wh.Validating, wh.Managed, p.clientConfigSetter(caBundle),
				func(w *admissionregistrationv1.ValidatingWebhook) entry {
					return entry{w.Name, &w.ClientConfig, &w.NamespaceSelector, &w.TimeoutSeconds}
				})
			if equality.Semantic.DeepEqual(out, cfg.Webhooks) {
				return false
			}
			cfg.Webhooks = out
			return true
		})
		if !apierrors.IsConflict(err) {
			break
		}
	}
	// A bundle is published only if both writes succeeded (also after the
	// last conflict).
	errs = append(errs, err)
	return errors.Join(errs...)
}

// updateConfiguration reads the named configuration into obj, lets mutate
// change it and writes it back if mutate reports a change.
func (p *Provider) updateConfiguration(ctx context.Context, name string, obj client.Object, mutate func() bool) error {
	if err := p.reader.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading webhook configuration %s: %w", name, err)
		}
		if p.existed[name] {
			return fmt.Errorf("webhook configuration %s was deleted; the operator updates it but does not create it again: "+
				"re-install it (helm upgrade, or kubectl apply -k)", name)
		}
		obj.SetName(name)
		mutate()
		if err := p.writer.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			if apierrors.IsForbidden(err) {
				// Installed RBAC names the configuration and grants no create
				// (only the local sandbox creates it).
				return fmt.Errorf("webhook configuration %s is missing and the operator may only update it, not create it: "+
					"re-install it (helm upgrade, or kubectl apply -k): %w", name, err)
			}
			return fmt.Errorf("creating webhook configuration %s: %w", name, err)
		}
		p.existed[name] = true
		p.log.Info("created webhook configuration", "name", name)
		return nil
	}
	p.existed[name] = true
	if !mutate() {
		return nil
	}
	if err := p.writer.Update(ctx, obj); err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		return fmt.Errorf("updating webhook configuration %s: %w", name, err)
	}
	p.log.Info("updated webhook configuration", "name", name)
	return nil
}

// clientConfigSetter returns the function that points a webhook at the
// operator: CA bundle, and either <ClientURL><path> or the Service
// <ServiceName>.<Namespace> with the path (keeping a port set before).
func (p *Provider) clientConfigSetter(caBundle []byte) func(cc *admissionregistrationv1.WebhookClientConfig, path string) {
	return func(cc *admissionregistrationv1.WebhookClientConfig, path string) {
		cc.CABundle = slices.Clone(caBundle)
		if p.url != nil {
			u := p.urlFor(path)
			cc.URL, cc.Service = &u, nil
			return
		}
		var port *int32
		if cc.Service != nil && cc.Service.Port != nil {
			port = ptr.To(*cc.Service.Port)
		}
		cc.URL = nil
		cc.Service = &admissionregistrationv1.ServiceReference{
			Namespace: p.opts.Namespace,
			Name:      p.opts.ServiceName,
			Path:      ptr.To(path),
			Port:      port,
		}
	}
}

// entry gives access to the fields of a mutating or validating webhook
// that reconcileEntries reads and sets.
type entry struct {
	name              string
	cc                *admissionregistrationv1.WebhookClientConfig
	namespaceSelector **metav1.LabelSelector
	timeoutSeconds    **int32
}

// reconcileEntries returns the webhooks a configuration should hold:
// existing entries keep their order and settings, except that managed
// entries not in desired (kinds that are not enabled) are dropped and the
// client config of desired ones is set; desired entries that are missing are
// appended, with the namespaceSelector and timeoutSeconds of the installed
// managed entries (the chart's settings: a namespace-scoped install admits
// its namespace only). Entries the operator does not manage are left alone.
func reconcileEntries[W any](
	existing, desired []W,
	managed []string,
	setClientConfig func(cc *admissionregistrationv1.WebhookClientConfig, path string),
	access func(*W) entry,
) []W {
	paths := map[string]string{}
	var order []string
	for i := range desired {
		e := access(&desired[i])
		name, cc := e.name, e.cc
		if cc.Service != nil && cc.Service.Path != nil {
			paths[name] = *cc.Service.Path
		}
		order = append(order, name)
	}
	seen := map[string]bool{}
	var installed *entry
	out := make([]W, 0, len(existing)+len(desired))
	for i := range existing {
		w := existing[i]
		e := access(&existing[i])
		name, cc := e.name, access(&w).cc // w's own copy is the one changed
		if slices.Contains(managed, name) && installed == nil {
			installed = &e
		}
		if slices.Contains(managed, name) {
			path, enabled := paths[name]
			if !enabled || seen[name] {
				continue
			}
			seen[name] = true
			*cc = *cc.DeepCopy()
			setClientConfig(cc, path)
		}
		out = append(out, w)
	}
	for i, name := range order {
		if seen[name] {
			continue
		}
		w := desired[i]
		e := access(&w)
		*e.cc = *e.cc.DeepCopy()
		setClientConfig(e.cc, paths[name])
		if installed != nil {
			*e.namespaceSelector = (*installed.namespaceSelector).DeepCopy()
			*e.timeoutSeconds = nil
			if t := *installed.timeoutSeconds; t != nil {
				*e.timeoutSeconds = ptr.To(*t)
			}
		}
		out = append(out, w)
	}
	return out
}

// watchWebhookConfigurations triggers a reconcile whenever one of the two
// configurations changes, e.g. when a re-applied manifest drops the CA
// bundle or lists disabled kinds again.
func (p *Provider) watchWebhookConfigurations(ctx context.Context, trigger chan<- struct{}) error {
	cs, err := kubernetes.NewForConfig(p.cfg)
	if err != nil {
		return err
	}
	notify := func() {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	api := cs.AdmissionregistrationV1()
	informers := []cache.SharedIndexInformer{
		cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.opts.Webhooks.MutatingName).String()
				return api.MutatingWebhookConfigurations().List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.opts.Webhooks.MutatingName).String()
				return api.MutatingWebhookConfigurations().Watch(ctx, o)
			},
		}, &admissionregistrationv1.MutatingWebhookConfiguration{}, 0, cache.Indexers{}),
		cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.opts.Webhooks.ValidatingName).String()
				return api.ValidatingWebhookConfigurations().List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.opts.Webhooks.ValidatingName).String()
				return api.ValidatingWebhookConfigurations().Watch(ctx, o)
			},
		}, &admissionregistrationv1.ValidatingWebhookConfiguration{}, 0, cache.Indexers{}),
	}
	for _, inf := range informers {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
		go inf.RunWithContext(ctx)
	}
	return nil
}
