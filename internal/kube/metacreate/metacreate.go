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

// Package metacreate creates pods and Services and reads back only their
// metadata: the engine builds each child, creates it and keeps nothing of
// the reply but its name, so the API server need not encode, nor the
// operator decode, the whole object it stored.
package metacreate

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// accept asks for the created object as PartialObjectMetadata, in protobuf
// (JSON if the server cannot), as client-go's metadata client does.
const accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// Client is a client.Client whose Create of a *corev1.Pod or *corev1.Service
// sends the object in protobuf and asks for metadata only in reply. After
// such a Create, obj's ObjectMeta is the server's (UID, resourceVersion,
// creation time, anything admission added) but its spec and status are as
// sent: the server's defaults are not read back. Every other call, and the
// Create of any other type, goes to the embedded client unchanged.
type Client struct {
	client.Client
	core rest.Interface
}

// New wraps c; cfg and httpClient (the manager's, to share its connections
// and rate limits' settings) reach the same API server as c.
func New(c client.Client, cfg *rest.Config, httpClient *http.Client) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &Client{Client: c, core: core.RESTClient()}, nil
}

// Create creates obj; see Client for what is read back.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	var meta *metav1.ObjectMeta
	var resource string
	switch o := obj.(type) {
	case *corev1.Pod:
		meta, resource = &o.ObjectMeta, "pods"
	case *corev1.Service:
		meta, resource = &o.ObjectMeta, "services"
	default:
		return c.Client.Create(ctx, obj, opts...)
	}
	createOpts := (&client.CreateOptions{}).ApplyOptions(opts).AsCreateOptions()
	var created metav1.PartialObjectMetadata
	err := c.core.Post().
		Namespace(obj.GetNamespace()).
		Resource(resource).
		VersionedParams(createOpts, metav1.ParameterCodec).
		SetHeader("Accept", accept).
		Body(obj).
		Do(ctx).
		Into(&created)
	if err != nil {
		return err
	}
	*meta = created.ObjectMeta
	return nil
}
