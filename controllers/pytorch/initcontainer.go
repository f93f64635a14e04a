package pytorch

import (
	"bytes"
	"fmt"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
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
}

// newInitContainerRenderer parses the template; text/template (not
// html/template as in v1) so shell quoting is never HTML-escaped.
func newInitContainerRenderer(text string) (*initContainerRenderer, error) {
	if text == "" {
		text = defaultInitContainerTemplate
	}
	t, err := template.New("init-container").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parsing PyTorch init container template: %w", err)
	}
	return &initContainerRenderer{tmpl: t}, nil
}

func (r *initContainerRenderer) render(d initContainerData) ([]corev1.Container, error) {
	var buf bytes.Buffer
	if err := r.tmpl.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("rendering PyTorch init container template: %w", err)
	}
	var cs []corev1.Container
	if err := yaml.UnmarshalStrict(buf.Bytes(), &cs); err != nil {
		return nil, fmt.Errorf("decoding rendered PyTorch init container template: %w", err)
	}
	return cs, nil
}
