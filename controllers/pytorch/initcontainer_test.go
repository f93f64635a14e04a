package pytorch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// v1TemplateFromSpec is v1's built-in template as the spec describes it
// (flow-style command, no port check, no .MasterPort): users copy it into
// their template file.
const v1TemplateFromSpec = `
- name: init-pytorch
  image: {{.InitContainerImage}}
  imagePullPolicy: IfNotPresent
  resources:
    limits:
      cpu: 100m
      memory: 20Mi
    requests:
      cpu: 50m
      memory: 10Mi
  command: ['sh', '-c', 'err=1;for i in $(seq {{.MaxTries}}); do if nslookup {{.MasterAddr}}; then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err']`

func TestInitContainerTemplates(t *testing.T) {
	data := initContainerData{MasterAddr: "j-master-0", MasterPort: 23456, InitContainerImage: "alpine:3.10", MaxTries: 3}
	resources := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{"cpu": mustQ("100m"), "memory": mustQ("20Mi")},
		Requests: corev1.ResourceList{"cpu": mustQ("50m"), "memory": mustQ("10Mi")},
	}
	cases := map[string]struct {
		template string
		want     []corev1.Container
	}{
		"v1's default template": {
			template: v1TemplateFromSpec,
			want: []corev1.Container{{
				Name: "init-pytorch", Image: "alpine:3.10", ImagePullPolicy: corev1.PullIfNotPresent, Resources: resources,
				Command: []string{"sh", "-c", "err=1;for i in $(seq 3); do if nslookup j-master-0; then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err"},
			}},
		},
		// v1 decodes leniently: keys unknown to corev1.Container (typos,
		// fields of newer Kubernetes versions) are dropped, not fatal.
		"unknown keys are ignored": {
			template: `- name: wait
  image: {{.InitContainerImage}}
  imagePullPolicy: Always
  restartPolicyy: Always
  futureField: {a: 1}
  command: [sh, -c, "nc -z {{.MasterAddr}} {{.MasterPort}}"]
`,
			want: []corev1.Container{{
				Name: "wait", Image: "alpine:3.10", ImagePullPolicy: corev1.PullAlways,
				Command: []string{"sh", "-c", "nc -z j-master-0 23456"},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := newInitContainerRenderer(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.render(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("init containers (-want +got):\n%s", diff)
			}
		})
	}
}

// A template that cannot produce containers fails New, so the operator
// stops at startup naming it, instead of failing every worker pod.
func TestNewRejectsBrokenInitContainerTemplate(t *testing.T) {
	cases := map[string]string{
		"template syntax":        "- name: {{.MasterAddr",
		"unknown template field": "- name: {{.Master}}\n",
		"not YAML":               "- name: [init\n",
		"not a container list":   "name: init\nimage: alpine\n",
		"wrong field type":       "- name: init\n  command: {{.MaxTries}}\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := New(Options{InitContainerTemplate: text}); err == nil {
				t.Errorf("New accepted the template %q", text)
			}
		})
	}
}
