package pytorch

import (
	"bytes"
	"fmt"
	"sync"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// defaultInitContainerTemplate waits until the master's Service resolves and
// its port accepts connections, so workers never race the rendezvous.
const defaultInitContainerTemplate = `- name: init-pytorch
  image: {{.InitContainerImage}}
  imagePullPolicy: IfNotPresent
  resources:
    limits:
      cpu: 100m
      memory: 20Mi
    requests:
      cpu: 50m
      memory: 10Mi
  command:
  - sh
  - -c
  - err=1;for i in $(seq {{.MaxTries}}); do if nslookup {{.MasterAddr}} && nc -z -w 2 {{.MasterAddr}} {{.MasterPort}}; then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err
`

// initContainerData are the fields a template may use.
type initContainerData struct {
	MasterAddr         string
	MasterPort         int32
	InitContainerImage string
	MaxTries           int
}

type initContainerRenderer struct {
	tmpl *template.Template

	// rendered memoizes render by its input: all workers of a job get the
	// same init containers, so executing the template and decoding its YAML
	// once per job, not per worker, is enough.
	mu       sync.Mutex
	rendered map[initContainerData][]corev1.Container
}

// maxRendered bounds the memo; it is cleared when full (entries are cheap
// to rebuild, and a job's workers are built together).
const maxRendered = 256

// newInitContainerRenderer parses the template; text/template (not
// html/template as in v1) so shell quoting is never HTML-escaped. It also
// renders the template once with sample values: a template that cannot
// produce containers is then an error at startup, not a failure of every
// worker pod reported only in the log.
func newInitContainerRenderer(text string) (*initContainerRenderer, error) {
	if text == "" {
		text = defaultInitContainerTemplate
	}
	t, err := template.New("init-container").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parsing PyTorch init container template: %w", err)
	}
	r := &initContainerRenderer{tmpl: t, rendered: map[initContainerData][]corev1.Container{}}
	sample := initContainerData{MasterAddr: "job-master-0", MasterPort: kubeflowv1.PyTorchJobDefaultPort, InitContainerImage: "image", MaxTries: 1}
	if _, err := r.execute(sample); err != nil {
		return nil, err
	}
	return r, nil
}

// render returns the init containers for d; the caller owns the result.
func (r *initContainerRenderer) render(d initContainerData) ([]corev1.Container, error) {
	r.mu.Lock()
	cs, ok := r.rendered[d]
	r.mu.Unlock()
	if !ok {
		var err error
		if cs, err = r.execute(d); err != nil {
			return nil, err
		}
		r.mu.Lock()
		if len(r.rendered) >= maxRendered {
			clear(r.rendered)
		}
		r.rendered[d] = cs
		r.mu.Unlock()
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		cs[i].DeepCopyInto(&out[i])
	}
	return out, nil
}

func (r *initContainerRenderer) execute(d initContainerData) ([]corev1.Container, error) {
	var buf bytes.Buffer
	if err := r.tmpl.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("rendering PyTorch init container template: %w", err)
	}
	// Lenient like v1: keys unknown to corev1.Container (typos, fields of
	// newer Kubernetes versions) are dropped, so templates v1 ran keep working.
	var cs []corev1.Container
	if err := yaml.Unmarshal(buf.Bytes(), &cs); err != nil {
		return nil, fmt.Errorf("decoding rendered PyTorch init container template: %w", err)
	}
	return cs, nil
}
