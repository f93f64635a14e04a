package pytorch

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/engine/frameworktest"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func defaulted(w *testjobs.PyTorchJobWrapper) *kubeflowv1.PyTorchJob {
	j := w.Obj()
	kubeflowv1.SetDefaults_PyTorchJob(j)
	return j
}

func TestEnvVars(t *testing.T) {
	cases := map[string]struct {
		job   *kubeflowv1.PyTorchJob
		rtype kubeflowv1.ReplicaType
		index int
		want  []corev1.EnvVar
	}{
		"master": {
			job:   defaulted(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3)),
			rtype: "Master", index: 0,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "MASTER_PORT", "23456", "PET_MASTER_PORT", "23456",
				"MASTER_ADDR", "j-master-0", "PET_MASTER_ADDR", "j-master-0", "WORLD_SIZE", "4",
				"RANK", "0", "PET_NODE_RANK", "0", "PET_NPROC_PER_NODE", "auto", "PET_NNODES", "4"),
		},
		"worker 2 with integer nproc": {
			job:   defaulted(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).NprocPerNode("8")),
			rtype: "Worker", index: 2,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "MASTER_PORT", "23456", "PET_MASTER_PORT", "23456",
				"MASTER_ADDR", "j-master-0", "PET_MASTER_ADDR", "j-master-0", "WORLD_SIZE", "32",
				"RANK", "3", "PET_NODE_RANK", "3", "PET_NPROC_PER_NODE", "8", "PET_NNODES", "4"),
		},
		"worker-only job rendezvous on worker 0": {
			job:   defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2)),
			rtype: "Worker", index: 1,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "MASTER_PORT", "23456", "PET_MASTER_PORT", "23456",
				"MASTER_ADDR", "j-worker-0", "PET_MASTER_ADDR", "j-worker-0", "WORLD_SIZE", "2",
				"RANK", "1", "PET_NODE_RANK", "1", "PET_NPROC_PER_NODE", "auto", "PET_NNODES", "2"),
		},
		"elastic": {
			job: defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2).ElasticPolicy(&kubeflowv1.ElasticPolicy{
				MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](4), MaxRestarts: ptr.To[int32](3),
				RDZVID: ptr.To("abc"), RDZVConf: []kubeflowv1.RDZVConf{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}},
				Standalone: ptr.To(true),
			})),
			rtype: "Worker", index: 0,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "MASTER_PORT", "23456", "PET_MASTER_PORT", "23456",
				"MASTER_ADDR", "j-worker-0", "PET_MASTER_ADDR", "j-worker-0", "WORLD_SIZE", "2",
				"RANK", "0", "PET_NODE_RANK", "0", "PET_NPROC_PER_NODE", "auto",
				"PET_RDZV_ENDPOINT", "j-worker-0:23456", "PET_RDZV_BACKEND", "c10d", "PET_NNODES", "1:4",
				"PET_MAX_RESTARTS", "3", "PET_RDZV_ID", "abc", "PET_RDZV_CONF", "a=1,b=2", "PET_STANDALONE", ""),
		},
		"elastic with empty rdzvConf does not panic": {
			job: defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2).ElasticPolicy(&kubeflowv1.ElasticPolicy{
				RDZVConf: []kubeflowv1.RDZVConf{}, RDZVHost: ptr.To("etcd"), RDZVPort: ptr.To[int32](2379),
				RDZVBackend: ptr.To(kubeflowv1.BackendETCD),
			})),
			rtype: "Worker", index: 0,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "MASTER_PORT", "23456", "PET_MASTER_PORT", "23456",
				"MASTER_ADDR", "j-worker-0", "PET_MASTER_ADDR", "j-worker-0", "WORLD_SIZE", "2",
				"RANK", "0", "PET_NODE_RANK", "0", "PET_NPROC_PER_NODE", "auto",
				"PET_RDZV_ENDPOINT", "etcd:2379", "PET_RDZV_BACKEND", "etcd", "PET_NNODES", "2:2", "PET_RDZV_CONF", ""),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := envVars(tc.job, tc.rtype, tc.index)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

// Names, labels (job-role on the master, or worker 0 without one), owner,
// restartPolicy and Services are the conformance test's; here only the
// PyTorch wiring.
func TestConformance(t *testing.T) {
	fw, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	frameworktest.Conformance(t, fw, map[string]*kubeflowv1.PyTorchJob{
		"master and workers": testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj(),
		"workers only":       testjobs.MakePyTorchJob("j", "ns").Workers(2).Obj(),
		"elastic":            testjobs.MakePyTorchJob("j", "ns").Workers(2).Elastic(1, 3).Obj(),
	})
}

func TestDecoratePodAddsInitContainerToWorkersOnly(t *testing.T) {
	fw, err := New(Options{InitContainerImage: "busybox:1", InitContainerMaxTries: 5})
	if err != nil {
		t.Fatal(err)
	}
	job := defaulted(testjobs.MakePyTorchJob("j", "ns").UID("u").Master(1).Workers(1))
	worker, _, err := engine.BuildPod(fw, job, "Worker", 0, job.Spec.PyTorchReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.Container{{
		Name:            "init-pytorch",
		Image:           "busybox:1",
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{"cpu": mustQ("100m"), "memory": mustQ("20Mi")},
			Requests: corev1.ResourceList{"cpu": mustQ("50m"), "memory": mustQ("10Mi")},
		},
		Command: []string{"sh", "-c", "err=1;for i in $(seq 5); do if nslookup j-master-0 && nc -z -w 2 j-master-0 23456; then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err"},
	}}
	if diff := cmp.Diff(want, worker.Spec.InitContainers); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if worker.Labels[kubeflowv1.JobRoleLabel] != "" {
		t.Error("worker must not carry job-role=master when a Master exists")
	}
	master, _, _ := engine.BuildPod(fw, job, "Master", 0, job.Spec.PyTorchReplicaSpecs["Master"])
	if len(master.Spec.InitContainers) != 0 {
		t.Errorf("master init containers = %v, want none", master.Spec.InitContainers)
	}
	workerOnly := defaulted(testjobs.MakePyTorchJob("w", "ns").Workers(2))
	w0, _, _ := engine.BuildPod(fw, workerOnly, "Worker", 0, workerOnly.Spec.PyTorchReplicaSpecs["Worker"])
	if len(w0.Spec.InitContainers) != 0 || w0.Labels[kubeflowv1.JobRoleLabel] != "master" {
		t.Errorf("worker-only job: init=%v labels=%v", w0.Spec.InitContainers, w0.Labels)
	}
}

func TestCustomInitContainerTemplate(t *testing.T) {
	fw, err := New(Options{InitContainerTemplate: "- name: wait\n  image: {{.InitContainerImage}}\n  args: [\"{{.MasterAddr}}:{{.MasterPort}}\", \"{{.MaxTries}}\"]\n"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := fw.init.render(initContainerData{MasterAddr: "a&b", MasterPort: 1, InitContainerImage: "img", MaxTries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a&b:1", "2"}, cs[0].Args); diff != "" {
		t.Errorf("args (-want +got), text/template must not HTML-escape:\n%s", diff)
	}
	if _, err := New(Options{InitContainerTemplate: "{{.Nope"}); err == nil || !strings.Contains(err.Error(), "template") {
		t.Errorf("bad template error = %v", err)
	}
}

func TestInitContainerRenderIsMemoizedAndOwnedByTheCaller(t *testing.T) {
	fw, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := initContainerData{MasterAddr: "j-master-0", MasterPort: 23456, InitContainerImage: "img", MaxTries: 3}
	first, err := fw.init.render(d)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fw.init.execute(d)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Command[2] = "changed by the caller"
	first[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("9")
	second, err := fw.init.render(d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("memoized render changed by a caller's edit (-want +got):\n%s", diff)
	}
	other, err := fw.init.render(initContainerData{MasterAddr: "k-master-0", MasterPort: 23456, InitContainerImage: "img", MaxTries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(other[0].Command[2], "nslookup k-master-0") {
		t.Errorf("another job's init container = %q, want its own master", other[0].Command[2])
	}
}

func TestEvaluate(t *testing.T) {
	fw, _ := New(Options{})
	st := func(active, succeeded int32) *kubeflowv1.ReplicaStatus {
		return &kubeflowv1.ReplicaStatus{Active: active, Succeeded: succeeded}
	}
	withMaster := defaulted(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(2))
	workerOnly := defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2))
	elastic := defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2).Elastic(1, 3))
	cases := map[string]struct {
		job      *kubeflowv1.PyTorchJob
		statuses map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus
		want     engine.Verdict
	}{
		"master running": {
			job:      withMaster,
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": st(1, 0), "Worker": st(2, 0)},
			want:     engine.Verdict{Running: true, RunningMessage: "PyTorchJob j is running.", SucceededMessage: "PyTorchJob j is successfully completed."},
		},
		"master succeeded decides": {
			job:      withMaster,
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": st(0, 1), "Worker": st(2, 0)},
			want:     engine.Verdict{Succeeded: true, RunningMessage: "PyTorchJob j is running.", SucceededMessage: "PyTorchJob j is successfully completed."},
		},
		"worker-only needs all workers": {
			job:      workerOnly,
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Worker": st(1, 1)},
			want:     engine.Verdict{Running: true, RunningMessage: "PyTorchJob ns/j is running.", SucceededMessage: "PyTorchJob ns/j successfully completed."},
		},
		"elastic: any worker": {
			job:      elastic,
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Worker": st(1, 1)},
			want:     engine.Verdict{Running: true, Succeeded: true, RunningMessage: "PyTorchJob ns/j is running.", SucceededMessage: "PyTorchJob ns/j successfully completed."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fw.Evaluate(tc.job, engine.ReplicaView{Specs: tc.job.Spec.PyTorchReplicaSpecs, Statuses: tc.statuses})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredHPA(t *testing.T) {
	fw, _ := New(Options{})
	if engine.DesiredHPA(fw, defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2).Elastic(1, 3))) != nil {
		t.Error("no metrics, no HPA")
	}
	h := engine.DesiredHPA(fw, defaulted(testjobs.MakePyTorchJob("j", "ns").UID("u").Workers(2).Elastic(1, 3, testjobs.CPUMetric(80))))
	if h == nil || h.Spec.MaxReplicas != 3 || *h.Spec.MinReplicas != 1 || h.Spec.ScaleTargetRef.Kind != "PyTorchJob" ||
		h.Spec.ScaleTargetRef.APIVersion != "kubeflow.org/v1" || h.OwnerReferences[0].UID != "u" {
		t.Errorf("desired HPA = %+v", h)
	}
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// BenchmarkBuildWorkerPods builds the three worker pods of a new 1+3 job, as
// its first reconcile does (go test -bench BuildWorkerPods ./controllers/pytorch).
func BenchmarkBuildWorkerPods(b *testing.B) {
	fw, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	job := defaulted(testjobs.MakePyTorchJob("j", "ns").UID("u").Master(1).Workers(3))
	spec := job.Spec.PyTorchReplicaSpecs["Worker"]
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		job.Name = "j" + strconv.Itoa(n) // a new job: its master address is new
		for i := range 3 {
			if _, _, err := engine.BuildPod(fw, job, "Worker", i, spec); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// The elastic bounds that the user left unset follow Worker.replicas after
// a scale or an edit (v1 recomputes them on every reconcile): the job is
// defaulted as the webhook stores it, scaled, then defaulted again as the
// reconciler does.
func TestElasticBoundsFollowWorkerReplicas(t *testing.T) {
	fw, _ := New(Options{})
	job := defaulted(testjobs.MakePyTorchJob("j", "ns").Workers(2).
		ElasticPolicy(&kubeflowv1.ElasticPolicy{Metrics: []autoscalingv2.MetricSpec{testjobs.CPUMetric(80)}}))
	job.Spec.PyTorchReplicaSpecs["Worker"].Replicas = ptr.To[int32](5)
	kubeflowv1.SetDefaults_PyTorchJob(job)

	env, err := envVars(job, "Worker", 0)
	if err != nil {
		t.Fatal(err)
	}
	var nnodes string
	for _, e := range env {
		if e.Name == "PET_NNODES" {
			nnodes = e.Value
		}
	}
	if nnodes != "5:5" {
		t.Errorf("PET_NNODES = %q, want 5:5", nnodes)
	}
	h := engine.DesiredHPA(fw, job)
	if h == nil {
		t.Fatal("no HPA")
	}
	got := []int32{ptr.Deref(h.Spec.MinReplicas, -1), h.Spec.MaxReplicas}
	if diff := cmp.Diff([]int32{5, 5}, got); diff != "" {
		t.Errorf("HPA min/max (-want +got):\n%s", diff)
	}
}
