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

// Package operatorproc is the one way the harnesses (e2e, chaos, bench)
// configure the operator binary they run as a child process on the local
// control plane: a typed Configuration, written as the file --config reads.
package operatorproc

import (
	"fmt"
	"os"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// Local is the Configuration of an operator outside the cluster: its
// webhook server on 127.0.0.1:webhookPort with self-signed certificates in
// certDir, reached by the API server at webhookURL (empty: that address;
// the local control plane has no Service network). Everything else is left
// to the operator's defaults; change what a harness needs on the result.
func Local(webhookPort int, certDir, webhookURL string) *configv1alpha1.Configuration {
	if webhookURL == "" {
		webhookURL = fmt.Sprintf("https://127.0.0.1:%d", webhookPort)
	}
	return &configv1alpha1.Configuration{
		Webhook: configv1alpha1.Webhook{
			Host:           "127.0.0.1",
			Port:           ptr.To(int32(webhookPort)),
			CertDir:        certDir,
			CertManagement: configv1alpha1.CertManagementSelfSigned,
			ClientURL:      webhookURL,
		},
	}
}

// Write writes cfg to path as the operator's --config file.
func Write(path string, cfg *configv1alpha1.Configuration) error {
	data, err := Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Marshal is cfg as YAML, with its apiVersion and kind; fields and sections
// left unset stay out, so the operator defaults them, and an older build the
// bench compares with reads the file as long as it sets nothing that build
// lacks.
func Marshal(cfg *configv1alpha1.Configuration) ([]byte, error) {
	c := cfg.DeepCopy()
	c.APIVersion = configv1alpha1.GroupVersion.String()
	c.Kind = "Configuration"
	return yaml.Marshal(c)
}
