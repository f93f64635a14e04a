package kinds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// The init container template file is optional (v1), lenient about keys
// unknown to corev1.Container (v1), and stops startup, naming the file,
// when it cannot produce containers (v1 silently used its default).
func TestNewPyTorchTemplateFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		file    string
		wantErr string
	}{
		"missing file":    {file: filepath.Join(dir, "absent.yaml")},
		"unknown key":     {file: write("lenient.yaml", "- name: wait\n  image: {{.InitContainerImage}}\n  notAField: 1\n")},
		"not a container": {file: write("broken.yaml", "- name: [wait\n"), wantErr: filepath.Join(dir, "broken.yaml")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := &configv1alpha1.Configuration{PyTorchInitContainer: configv1alpha1.PyTorchInitContainer{TemplateFile: tc.file}}
			_, err := newPyTorch(cfg)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("newPyTorch: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("newPyTorch error = %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}
