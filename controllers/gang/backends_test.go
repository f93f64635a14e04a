package gang

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	schedpluginsv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/scheduling/v1alpha1"
)

func TestSetVolcanoSpec(t *testing.T) {
	g := groupSpec{
		MinMember: 4, Queue: "default", PriorityClassName: "high",
		MinResources: corev1.ResourceList{"cpu": q("7"), "nvidia.com/gpu": q("3")},
	}
	cases := []struct {
		name     string
		existing volcanov1beta1.PodGroupSpec
		g        groupSpec
		want     volcanov1beta1.PodGroupSpec
	}{
		{
			name: "new group",
			g:    g,
			want: volcanov1beta1.PodGroupSpec{MinMember: 4, Queue: "default", PriorityClassName: "high",
				MinResources: &corev1.ResourceList{"cpu": q("7"), "nvidia.com/gpu": q("3")}},
		},
		{
			name: "a queue already set is kept; fields of others are kept",
			existing: volcanov1beta1.PodGroupSpec{MinMember: 2, Queue: "team-a", PriorityClassName: "low",
				MinTaskMember:   map[string]int32{"worker": 3},
				NetworkTopology: &volcanov1beta1.NetworkTopologySpec{Mode: "hard"}},
			g: g,
			want: volcanov1beta1.PodGroupSpec{MinMember: 4, Queue: "team-a", PriorityClassName: "high",
				MinTaskMember:   map[string]int32{"worker": 3},
				NetworkTopology: &volcanov1beta1.NetworkTopologySpec{Mode: "hard"},
				MinResources:    &corev1.ResourceList{"cpu": q("7"), "nvidia.com/gpu": q("3")}},
		},
		{
			name:     "nothing requested clears minResources",
			existing: volcanov1beta1.PodGroupSpec{MinMember: 1, Queue: "q", MinResources: &corev1.ResourceList{"cpu": q("1")}},
			g:        groupSpec{MinMember: 1, Queue: "default"},
			want:     volcanov1beta1.PodGroupSpec{MinMember: 1, Queue: "q"},
		},
		{
			name:     "equal quantities in another form are left alone",
			existing: volcanov1beta1.PodGroupSpec{MinMember: 1, Queue: "default", MinResources: &corev1.ResourceList{"cpu": q("1000m")}},
			g:        groupSpec{MinMember: 1, Queue: "default", MinResources: corev1.ResourceList{"cpu": q("1")}},
			want:     volcanov1beta1.PodGroupSpec{MinMember: 1, Queue: "default", MinResources: &corev1.ResourceList{"cpu": q("1000m")}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pg := &volcanov1beta1.PodGroup{Spec: tc.existing}
			setVolcanoSpec(pg, tc.g)
			if diff := cmp.Diff(tc.want, pg.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVolcanoAdmitted(t *testing.T) {
	cases := []struct {
		status volcanov1beta1.PodGroupStatus
		want   bool
	}{
		{status: volcanov1beta1.PodGroupStatus{}, want: false},
		{status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending}, want: false},
		{status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupInqueue}, want: true},
		{status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupRunning, Running: 3}, want: true},
		{status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupUnknown, Running: 1}, want: true},
		{status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending, Running: 2}, want: true},
		{status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending, Succeeded: 1}, want: true},
	}
	for _, tc := range cases {
		if got := volcanoAdmitted(&volcanov1beta1.PodGroup{Status: tc.status}); got != tc.want {
			t.Errorf("volcanoAdmitted(%+v) = %v, want %v", tc.status, got, tc.want)
		}
	}
}

func TestVolcanoWaitMessage(t *testing.T) {
	pg := &volcanov1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec:       volcanov1beta1.PodGroupSpec{MinMember: 4, Queue: "q"},
		Status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending, Conditions: []volcanov1beta1.PodGroupCondition{{
			Type: volcanov1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue, Message: "4/4 tasks in gang unschedulable",
		}}},
	}
	want := `waiting for Volcano to admit PodGroup job (phase Pending, minMember 4, queue "q"); pods are created once it is Inqueue: 4/4 tasks in gang unschedulable`
	if got := volcanoWaitMessage(pg); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}

func TestSetPluginsSpec(t *testing.T) {
	cases := []struct {
		name     string
		existing schedpluginsv1alpha1.PodGroupSpec
		g        groupSpec
		want     schedpluginsv1alpha1.PodGroupSpec
	}{
		{
			name: "new group",
			g: groupSpec{MinMember: 3, Queue: "ignored", ScheduleTimeoutSeconds: ptr.To[int32](60),
				MinResources: corev1.ResourceList{"cpu": q("3"), "example.com/fpga": q("1")}},
			want: schedpluginsv1alpha1.PodGroupSpec{MinMember: 3, ScheduleTimeoutSeconds: ptr.To[int32](60),
				MinResources: corev1.ResourceList{"cpu": q("3"), "example.com/fpga": q("1")}},
		},
		{
			name:     "follows the job",
			existing: schedpluginsv1alpha1.PodGroupSpec{MinMember: 3, ScheduleTimeoutSeconds: ptr.To[int32](60), MinResources: corev1.ResourceList{"cpu": q("3")}},
			g:        groupSpec{MinMember: 5, MinResources: corev1.ResourceList{"cpu": q("5")}},
			want:     schedpluginsv1alpha1.PodGroupSpec{MinMember: 5, MinResources: corev1.ResourceList{"cpu": q("5")}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pg := &schedpluginsv1alpha1.PodGroup{Spec: tc.existing}
			setPluginsSpec(pg, tc.g)
			if diff := cmp.Diff(tc.want, pg.Spec, quantityCmp); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNativeSpecs(t *testing.T) {
	g := groupSpec{MinMember: 3, PriorityClassName: "high"}
	gang := func(n int32) schedulingv1beta1.PodGroupSchedulingPolicy {
		return schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: n}}
	}

	w := &schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job"}}
	setWorkloadSpec(w, "PyTorchJob", g, true)
	wantW := schedulingv1beta1.WorkloadSpec{
		ControllerRef:     &schedulingv1beta1.TypedLocalObjectReference{APIGroup: "kubeflow.org", Kind: "PyTorchJob", Name: "job"},
		PodGroupTemplates: []schedulingv1beta1.PodGroupTemplate{{Name: "gang", SchedulingPolicy: gang(3), PriorityClassName: "high"}},
	}
	if diff := cmp.Diff(wantW, w.Spec); diff != "" {
		t.Errorf("new Workload (-want +got):\n%s", diff)
	}
	// An update only moves minCount; immutable fields stay.
	setWorkloadSpec(w, "PyTorchJob", groupSpec{MinMember: 0, PriorityClassName: "other"}, false)
	wantW.PodGroupTemplates[0].SchedulingPolicy = gang(1)
	if diff := cmp.Diff(wantW, w.Spec); diff != "" {
		t.Errorf("updated Workload (-want +got):\n%s", diff)
	}

	p := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "job"}}
	setNativePodGroupSpec(p, g, true)
	wantP := schedulingv1beta1.PodGroupSpec{
		WorkloadRef:       &schedulingv1beta1.WorkloadReference{WorkloadName: "job", TemplateName: "gang"},
		SchedulingPolicy:  gang(3),
		PriorityClassName: "high",
	}
	if diff := cmp.Diff(wantP, p.Spec); diff != "" {
		t.Errorf("new PodGroup (-want +got):\n%s", diff)
	}
	setNativePodGroupSpec(p, groupSpec{MinMember: 5}, false)
	wantP.SchedulingPolicy = gang(5)
	if diff := cmp.Diff(wantP, p.Spec); diff != "" {
		t.Errorf("updated PodGroup (-want +got):\n%s", diff)
	}
	// A basic-policy group is never turned into a gang (the field is immutable).
	basic := &schedulingv1beta1.PodGroup{Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}}
	setNativePodGroupSpec(basic, g, false)
	if basic.Spec.SchedulingPolicy.Gang != nil {
		t.Errorf("basic policy changed: %+v", basic.Spec.SchedulingPolicy)
	}
}

func TestDefaultBackend(t *testing.T) {
	cases := []struct {
		cfg      configv1alpha1.GangScheduling
		wantAPI  configv1alpha1.PodGroupAPI
		wantName string
	}{
		{cfg: configv1alpha1.GangScheduling{}, wantAPI: "", wantName: ""},
		{cfg: configv1alpha1.GangScheduling{SchedulerName: "volcano"}, wantAPI: "volcano", wantName: "volcano"},
		{cfg: configv1alpha1.GangScheduling{SchedulerName: "Volcano"}, wantAPI: "volcano", wantName: "Volcano"},
		{cfg: configv1alpha1.GangScheduling{SchedulerName: "scheduler-plugins"}, wantAPI: "scheduler-plugins", wantName: "scheduler-plugins"},
		{cfg: configv1alpha1.GangScheduling{SchedulerPluginsSchedulerName: "sp", PodGroupAPI: "scheduler-plugins"}, wantAPI: "scheduler-plugins", wantName: "sp"},
		{cfg: configv1alpha1.GangScheduling{PodGroupAPI: "volcano"}, wantAPI: "volcano", wantName: "volcano"},
		{cfg: configv1alpha1.GangScheduling{PodGroupAPI: "kubernetes"}, wantAPI: "kubernetes", wantName: ""},
		{cfg: configv1alpha1.GangScheduling{SchedulerName: "my-gang", PodGroupAPI: "kubernetes"}, wantAPI: "kubernetes", wantName: "my-gang"},
		{cfg: configv1alpha1.GangScheduling{SchedulerName: "kube-batch", PodGroupAPI: "volcano"}, wantAPI: "volcano", wantName: "kube-batch"},
	}
	for _, tc := range cases {
		api, name := defaultBackend(tc.cfg)
		if api != tc.wantAPI || name != tc.wantName {
			t.Errorf("defaultBackend(%+v) = %q, %q; want %q, %q", tc.cfg, api, name, tc.wantAPI, tc.wantName)
		}
	}
}

func TestChoose(t *testing.T) {
	withSchedulers := func(master, worker string) *kubeflowv1.PyTorchJob {
		j := pytorchJob(2)
		j.Spec.PyTorchReplicaSpecs["Master"].Template.Spec.SchedulerName = master
		j.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.SchedulerName = worker
		return j
	}
	cases := []struct {
		name        string
		cfg         configv1alpha1.GangScheduling
		job         *kubeflowv1.PyTorchJob
		wantBackend string // "" = no gang scheduling
		wantName    string
	}{
		{name: "off by default", job: withSchedulers("", "")},
		{name: "a template asks for Volcano", job: withSchedulers("", "volcano"), wantBackend: "Volcano", wantName: "volcano"},
		{name: "a template asks for scheduler-plugins", job: withSchedulers("scheduler-plugins-scheduler", ""),
			wantBackend: "scheduler-plugins", wantName: "scheduler-plugins-scheduler"},
		{name: "first template in the framework's order wins", job: withSchedulers("scheduler-plugins-scheduler", "volcano"),
			wantBackend: "scheduler-plugins", wantName: "scheduler-plugins-scheduler"},
		{name: "another scheduler gets the default", cfg: configv1alpha1.GangScheduling{SchedulerName: "volcano"},
			job: withSchedulers("my-scheduler", ""), wantBackend: "Volcano", wantName: "volcano"},
		{name: "per-job choice beats the default", cfg: configv1alpha1.GangScheduling{PodGroupAPI: "kubernetes"},
			job: withSchedulers("", "volcano"), wantBackend: "Volcano", wantName: "volcano"},
		{name: "native default", cfg: configv1alpha1.GangScheduling{PodGroupAPI: "kubernetes"},
			job: withSchedulers("", ""), wantBackend: "Kubernetes", wantName: ""},
		{name: "a backend not enabled is not selected", cfg: configv1alpha1.GangScheduling{PodGroupAPIs: []configv1alpha1.PodGroupAPI{"scheduler-plugins"}},
			job: withSchedulers("", "volcano")},
		{name: "a backend not enabled falls to the default", job: withSchedulers("volcano", "scheduler-plugins-scheduler"),
			cfg:         configv1alpha1.GangScheduling{PodGroupAPI: "kubernetes", PodGroupAPIs: []configv1alpha1.PodGroupAPI{"kubernetes", "scheduler-plugins"}},
			wantBackend: "scheduler-plugins", wantName: "scheduler-plugins-scheduler"},
		{name: "an enabled backend is selected", cfg: configv1alpha1.GangScheduling{PodGroupAPIs: []configv1alpha1.PodGroupAPI{"volcano"}},
			job: withSchedulers("", "volcano"), wantBackend: "Volcano", wantName: "volcano"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.SchedulerPluginsSchedulerName == "" {
				tc.cfg.SchedulerPluginsSchedulerName = configv1alpha1.DefaultSchedulerPluginsSchedulerName
			}
			m := New(Options{Config: tc.cfg})
			got := m.Selector()(fakeFramework{}.gangJob(tc.job))
			if tc.wantBackend == "" {
				if got != nil {
					t.Fatalf("got a gang scheduler %#v, want none", got)
				}
				return
			}
			s, ok := got.(*scheduler)
			if !ok {
				t.Fatalf("got %#v, want a scheduler", got)
			}
			if s.b.name() != tc.wantBackend || s.schedulerName != tc.wantName {
				t.Errorf("got %s/%q, want %s/%q", s.b.name(), s.schedulerName, tc.wantBackend, tc.wantName)
			}
		})
	}
}

func TestDecoratePod(t *testing.T) {
	job := pytorchJob(2)
	pod := func(schedulerName string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
			Spec:       corev1.PodSpec{SchedulerName: schedulerName},
		}
	}
	m := New(Options{Config: configv1alpha1.GangScheduling{SchedulerPluginsSchedulerName: "sp", PodGroupAPI: "kubernetes"}})
	cases := []struct {
		name        string
		s           *scheduler
		pod         *corev1.Pod
		want        *corev1.Pod
		wantWarning string
	}{
		{
			name: "volcano",
			s:    selectable(t, m, configv1alpha1.PodGroupAPIVolcano), pod: pod(""),
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{
					"c": "d", "scheduling.k8s.io/group-name": "job", "volcano.sh/task-spec": "worker"}},
				Spec: corev1.PodSpec{SchedulerName: "volcano"},
			},
		},
		{
			name: "another scheduler in the template is kept, with a warning",
			s:    selectable(t, m, configv1alpha1.PodGroupAPIVolcano), pod: pod("default-scheduler"),
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{
					"c": "d", "scheduling.k8s.io/group-name": "job", "volcano.sh/task-spec": "worker"}},
				Spec: corev1.PodSpec{SchedulerName: "default-scheduler"},
			},
			wantWarning: "Another scheduler is specified when gang-scheduling is enabled and it will not be overwritten",
		},
		{
			name: "scheduler-plugins",
			s:    selectable(t, m, configv1alpha1.PodGroupAPISchedulerPlugins), pod: pod(""),
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{"a": "b", "scheduling.x-k8s.io/pod-group": "job"},
					Annotations: map[string]string{"c": "d"}},
				Spec: corev1.PodSpec{SchedulerName: "sp"},
			},
		},
		{
			name: "native keeps the default scheduler",
			s:    m.def, pod: pod(""),
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
				Spec:       corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("job")}},
			},
		},
		{
			name: "native with a custom scheduler: no warning",
			s:    m.def, pod: pod("gang-profile"),
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
				Spec:       corev1.PodSpec{SchedulerName: "gang-profile", SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("job")}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.s.DecoratePod(job, "Worker", tc.pod)
			if w != tc.wantWarning {
				t.Errorf("warning = %q, want %q", w, tc.wantWarning)
			}
			if diff := cmp.Diff(tc.want, tc.pod); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}

// selectable is m's backend of api that a replica template selects by name.
func selectable(t *testing.T, m *Manager, api configv1alpha1.PodGroupAPI) *scheduler {
	t.Helper()
	for _, s := range m.selectable {
		if s.api == api {
			return s
		}
	}
	t.Fatalf("no selectable backend %q", api)
	return nil
}

// Every podGroupAPI the Configuration accepts has its entry in backends,
// and every entry a value: a backend is its file, its entry and its value.
func TestEveryPodGroupAPIHasABackend(t *testing.T) {
	var registered []configv1alpha1.PodGroupAPI
	for _, e := range backends {
		registered = append(registered, e.api)
		if e.new == nil {
			t.Errorf("backend %q has no constructor", e.api)
		}
		if (e.addToScheme == nil) != e.kind.Empty() {
			t.Errorf("backend %q: addToScheme and the kind it registers go together", e.api)
		}
	}
	if !slices.Equal(registered, configv1alpha1.PodGroupAPIs()) {
		t.Errorf("backends %v, podGroupAPI values %v", registered, configv1alpha1.PodGroupAPIs())
	}
	// Each is the operator default when named by podGroupAPI.
	for _, api := range configv1alpha1.PodGroupAPIs() {
		m := New(Options{Config: configv1alpha1.GangScheduling{PodGroupAPI: api, SchedulerPluginsSchedulerName: "sp"}})
		if m.def == nil || m.def.api != api || m.def.b.name() == "" {
			t.Errorf("podGroupAPI %q: default backend %+v", api, m.def)
		}
	}
}

func TestDefaultBackendMustBeEnabled(t *testing.T) {
	only := func(apis ...configv1alpha1.PodGroupAPI) []configv1alpha1.PodGroupAPI { return apis }
	cases := []struct {
		name    string
		cfg     configv1alpha1.GangScheduling
		wantErr string
	}{
		{name: "every backend enabled", cfg: configv1alpha1.GangScheduling{SchedulerName: "volcano"}},
		{name: "no default", cfg: configv1alpha1.GangScheduling{PodGroupAPIs: only("kubernetes")}},
		{name: "default enabled", cfg: configv1alpha1.GangScheduling{SchedulerName: "Volcano", PodGroupAPIs: only("volcano")}},
		{name: "default by podGroupAPI not enabled", cfg: configv1alpha1.GangScheduling{PodGroupAPI: "kubernetes", PodGroupAPIs: only("volcano")},
			wantErr: `gangScheduling.podGroupAPIs: Invalid value: ["volcano"]: must include "kubernetes"`},
		{name: "default by name not enabled", cfg: configv1alpha1.GangScheduling{SchedulerName: "coscheduler", PodGroupAPIs: only("volcano")},
			wantErr: `must include "scheduler-plugins"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validate(tc.cfg)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestResources: each backend's resources are its kinds' plural API
// resources (what its RBAC rules must name).
func TestResources(t *testing.T) {
	got := Resources()
	for _, e := range backends {
		var want []schema.GroupResource
		for _, k := range e.new().kinds() {
			plural, _ := meta.UnsafeGuessKindToResource(k.gvk)
			want = append(want, plural.GroupResource())
		}
		if diff := cmp.Diff(want, got[e.api]); diff != "" {
			t.Errorf("backend %s (-want +got):\n%s", e.api, diff)
		}
	}
}
