package webhooks

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestValidateFailurePolicy(t *testing.T) {
	withFP := func(fp *kubeflowv1.FailurePolicy, mutate ...func(*kubeflowv1.PyTorchJob)) *kubeflowv1.PyTorchJob {
		j := pytorchJob("job", specs{master: rs(1, ctr("pytorch")), worker: rs(3, ctr("pytorch"), ctr("sidecar"))}, mutate...)
		j.Spec.RunPolicy.FailurePolicy = fp
		return j
	}
	fp := testjobs.MakeFailurePolicy
	rules := field.NewPath("spec", "runPolicy", "failurePolicy", "rules")
	fpPath := field.NewPath("spec", "runPolicy", "failurePolicy")
	actions := []string{"FailJob", "RestartJob", "RestartJobAndIgnoreMaxRestarts", "UseReplicaRestartPolicy"}
	issueExample := fp(3).Strategy(kubeflowv1.RestartStrategyBlockingRecreate).
		Rule("infrastructure", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).OnPodCondition(corev1.DisruptionTarget).
		Rule("user-error", kubeflowv1.FailJobAction).OnExitCodes("pytorch", kubeflowv1.FailurePolicyOnExitCodesOpIn, 1, 2).
		Rule("workers", kubeflowv1.UseReplicaRestartPolicyAction, worker).Obj()
	tooMany := fp(1)
	for i := 0; i < 21; i++ {
		tooMany.Rule(string(rune('a'+i)), kubeflowv1.RestartJobAction)
	}

	runValidationCases(t, ValidatePyTorchJob, []validationCase[*kubeflowv1.PyTorchJob]{
		{name: "the issue's example", job: withFP(issueExample)},
		{name: "no rules", job: withFP(fp(0).Obj())},
		{name: "maxTotalRestarts at maxRestarts", job: withFP(fp(2).MaxTotal(2).Obj())},
		{
			name:     "maxTotalRestarts below maxRestarts",
			job:      withFP(fp(3).MaxTotal(2).Obj()),
			wantErrs: field.ErrorList{field.Invalid(fpPath.Child("maxTotalRestarts"), int32(2), "must be at least maxRestarts (3): it bounds every restart, the counted ones included")},
		},
		{name: "a restart backoff and a lost-pod timeout", job: withFP(fp(2).Backoff(10, 60).LostPodTimeout(0).Obj())},
		{
			name: "a restart backoff without a delay, and a negative lost-pod timeout",
			job:  withFP(fp(2).Backoff(0, 0).LostPodTimeout(-1).Obj()),
			wantErrs: field.ErrorList{
				field.Invalid(fpPath.Child("lostPodTimeoutSeconds"), int64(-1), "must be greater than or equal to 0"),
				field.Invalid(fpPath.Child("restartBackoff", "initialDelaySeconds"), int32(0), "must be at least 1"),
			},
		},
		{
			name:     "a restart backoff capped below its first delay",
			job:      withFP(fp(2).Backoff(30, 10).Obj()),
			wantErrs: field.ErrorList{field.Invalid(fpPath.Child("restartBackoff", "maxDelaySeconds"), int32(10), "must be at least initialDelaySeconds (30)")},
		},
		{name: "sidecar container targeted on workers", job: withFP(fp(1).Rule("r", kubeflowv1.FailJobAction, worker).
			OnExitCodes("sidecar", kubeflowv1.FailurePolicyOnExitCodesOpNotIn, 3).Obj())},
		{
			name: "an init container of every template",
			job: withFP(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("fetch", kubeflowv1.FailurePolicyOnExitCodesOpIn, 2).Obj(),
				func(j *kubeflowv1.PyTorchJob) {
					for _, s := range j.Spec.PyTorchReplicaSpecs {
						s.Template.Spec.InitContainers = []corev1.Container{ctr("fetch")}
					}
				}),
		},
		{
			name:     "negative maxRestarts",
			job:      withFP(fp(-1).Obj()),
			wantErrs: field.ErrorList{field.Invalid(fpPath.Child("maxRestarts"), int64(-1), "must be greater than or equal to 0")},
		},
		{
			name:     "unknown strategy",
			job:      withFP(fp(1).Strategy("Rolling").Obj()),
			wantErrs: field.ErrorList{field.NotSupported(fpPath.Child("restartStrategy"), kubeflowv1.RestartStrategy("Rolling"), restartStrategies)},
		},
		{
			name:     "unknown action",
			job:      withFP(fp(1).Rule("r", "Retry").Obj()),
			wantErrs: field.ErrorList{field.NotSupported(rules.Index(0).Child("action"), kubeflowv1.FailurePolicyAction("Retry"), actions)},
		},
		{
			name:     "duplicate rule names",
			job:      withFP(fp(1).Rule("r", kubeflowv1.FailJobAction).Rule("r", kubeflowv1.RestartJobAction).Obj()),
			wantErrs: field.ErrorList{field.Duplicate(rules.Index(1).Child("name"), "r")},
		},
		{
			name:     "empty rule name",
			job:      withFP(fp(1).Rule("", kubeflowv1.FailJobAction).Obj()),
			wantErrs: field.ErrorList{field.Required(rules.Index(0).Child("name"), "must name the rule")},
		},
		{
			name: "exit codes out of range and repeated",
			job: withFP(fp(1).Rule("ok", kubeflowv1.FailJobAction).
				Rule("bad", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 0, 3, 256, 3).Obj()),
			wantErrs: field.ErrorList{
				field.Invalid(rules.Index(1).Child("onExitCodes", "values").Index(0), int32(0), "must be between 1 and 255"),
				field.Invalid(rules.Index(1).Child("onExitCodes", "values").Index(2), int32(256), "must be between 1 and 255"),
				field.Duplicate(rules.Index(1).Child("onExitCodes", "values").Index(3), int32(3)),
			},
		},
		{
			name:     "no exit codes",
			job:      withFP(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn).Obj()),
			wantErrs: field.ErrorList{field.Required(rules.Index(0).Child("onExitCodes", "values"), "must list at least one exit code")},
		},
		{
			name: "unknown operator",
			job:  withFP(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("", "Gt", 1).Obj()),
			wantErrs: field.ErrorList{field.NotSupported(rules.Index(0).Child("onExitCodes", "operator"),
				kubeflowv1.FailurePolicyOnExitCodesOperator("Gt"), exitCodeOperators)},
		},
		{
			name: "container not in a targeted template",
			job: withFP(fp(1).Rule("r", kubeflowv1.FailJobAction).
				OnExitCodes("sidecar", kubeflowv1.FailurePolicyOnExitCodesOpIn, 1).Obj()),
			wantErrs: field.ErrorList{field.Invalid(rules.Index(0).Child("onExitCodes", "containerName"), "sidecar",
				"must name a container or init container of every targeted replica type; replica type Master has none of that name")},
		},
		{
			name: "target replica type the job lacks",
			job:  withFP(fp(1).Rule("r", kubeflowv1.FailJobAction, "Evaluator").Obj()),
			wantErrs: field.ErrorList{field.NotSupported(rules.Index(0).Child("targetReplicaTypes").Index(0),
				kubeflowv1.ReplicaType("Evaluator"), []string{"Master", "Worker"})},
		},
		{
			name: "both exit codes and pod conditions",
			job: withFP(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 1).
				OnPodCondition(corev1.DisruptionTarget).Obj()),
			wantErrs: field.ErrorList{field.Forbidden(rules.Index(0), "must not set both onExitCodes and onPodConditions")},
		},
		{
			name: "pod condition without type and with a bad status",
			job: withFP(func() *kubeflowv1.FailurePolicy {
				p := fp(1).Rule("r", kubeflowv1.FailJobAction).Obj()
				p.Rules[0].OnPodConditions = []kubeflowv1.FailurePolicyOnPodConditionsPattern{{Status: "Maybe"}}
				return p
			}()),
			wantErrs: field.ErrorList{
				field.Required(rules.Index(0).Child("onPodConditions").Index(0).Child("type"), "must name a pod condition type"),
				field.NotSupported(rules.Index(0).Child("onPodConditions").Index(0).Child("status"), corev1.ConditionStatus("Maybe"), conditionStatuses),
			},
		},
		{
			name:     "too many rules",
			job:      withFP(tooMany.Obj()),
			wantErrs: field.ErrorList{field.TooMany(rules, 21, MaxFailurePolicyRules)},
		},
		{
			name:     "with an elastic policy",
			job:      withFP(fp(1).Obj(), func(j *kubeflowv1.PyTorchJob) { j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{} }),
			wantErrs: field.ErrorList{field.Forbidden(fpPath, "must not be set together with spec.elasticPolicy: the elastic launcher restarts workers itself")},
		},
		{
			name:     "added on update",
			old:      withFP(nil),
			job:      withFP(fp(1).Obj()),
			wantErrs: field.ErrorList{field.Invalid(fpPath, "", "field is immutable")},
		},
		{
			name:     "changed on update",
			old:      withFP(fp(1).Obj()),
			job:      withFP(fp(2).Obj()),
			wantErrs: field.ErrorList{field.Invalid(fpPath, "", "field is immutable")},
		},
		{name: "unchanged on update", old: withFP(issueExample), job: withFP(issueExample)},
	})
}

// MPIJob containers may have any name: a rule reads the job's main
// container (spec.mainContainer, else the first), and a containerName must
// name a container the targeted templates have, "mpi" included.
func TestValidateFailurePolicyMPIJob(t *testing.T) {
	const (
		launcher = kubeflowv1.MPIJobReplicaTypeLauncher
		worker   = kubeflowv1.MPIJobReplicaTypeWorker
	)
	named := func(fp *kubeflowv1.FailurePolicy, mutate ...func(*kubeflowv1.MPIJob)) *kubeflowv1.MPIJob {
		j := mpiJob("m", specs{launcher: rs(1, ctr("launcher")), worker: rs(2, ctr("worker"))}, mutate...)
		j.Spec.RunPolicy.FailurePolicy = fp
		return j
	}
	fp := testjobs.MakeFailurePolicy
	in := kubeflowv1.FailurePolicyOnExitCodesOpIn
	containerName := field.NewPath("spec", "runPolicy", "failurePolicy", "rules").Index(0).Child("onExitCodes", "containerName")
	runValidationCases(t, ValidateMPIJob, []validationCase[*kubeflowv1.MPIJob]{
		{name: "a rule without containerName", job: named(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("", in, 1).Obj())},
		{name: "the launcher's container on the Launcher", job: named(fp(1).Rule("r", kubeflowv1.FailJobAction, launcher).OnExitCodes("launcher", in, 1).Obj())},
		{
			name: "spec.mainContainer, second in both templates",
			job: named(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("trainer", in, 1).Obj(), func(j *kubeflowv1.MPIJob) {
				j.Spec.MainContainer = "trainer"
				j.Spec.MPIReplicaSpecs = specs{launcher: rs(1, ctr("sidecar"), ctr("trainer")), worker: rs(2, ctr("sidecar"), ctr("trainer"))}
			}),
		},
		{
			name: "mpi, which no container is called",
			job:  named(fp(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("mpi", in, 1).Obj()),
			wantErrs: field.ErrorList{
				field.Invalid(containerName, "mpi", "must name a container or init container of every targeted replica type; replica type Launcher has none of that name"),
				field.Invalid(containerName, "mpi", "must name a container or init container of every targeted replica type; replica type Worker has none of that name"),
			},
		},
	})
}

func TestFailurePolicyElasticPaddle(t *testing.T) {
	j := testjobs.MakePaddleJob("p", "ns").Master(1).Workers(2).Elastic(1, 2).Obj()
	j.Spec.RunPolicy.FailurePolicy = testjobs.MakeFailurePolicy(1).Obj()
	j.ApplyDefaults()
	errs, _ := ValidatePaddleJob(nil, j)
	want := field.ErrorList{field.Forbidden(field.NewPath("spec", "runPolicy", "failurePolicy"), "must not be set together with spec.elasticPolicy: the elastic launcher restarts workers itself")}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// Every kind validates the failure policy against its own replica types and
// default container, and the webhook's error names the field path.
func TestFailurePolicyEveryKindThroughWebhook(t *testing.T) {
	bad := testjobs.MakeFailurePolicy(1).Rule("r", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 300).Obj()
	wh := pytorchWebhook()
	job := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).FailurePolicy(bad).Obj()
	_, err := wh.ValidateCreate(context.Background(), job)
	want := `spec.runPolicy.failurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 300: must be between 1 and 255`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	for _, job := range []kubeflowv1.Job{
		testjobs.WithFailurePolicy(testjobs.MakeTFJob("t", "ns").Workers(1).Obj(), bad),
		testjobs.WithFailurePolicy(testjobs.MakeMPIJob("m", "ns").Launcher().Workers(1).Obj(), bad),
		testjobs.WithFailurePolicy(testjobs.MakeXGBoostJob("x", "ns").Master(1).Workers(1).Obj(), bad),
		testjobs.WithFailurePolicy(testjobs.MakePaddleJob("p", "ns").Master(1).Workers(1).Obj(), bad),
		testjobs.WithFailurePolicy(testjobs.MakeJAXJob("j", "ns").Workers(1).Obj(), bad),
	} {
		job.ApplyDefaults()
		errs := validateFailurePolicy(job)
		if len(errs) != 1 || errs[0].Field != "spec.runPolicy.failurePolicy.rules[0].onExitCodes.values[0]" {
			t.Errorf("%s: errors = %v", job.KindInfo().Kind, errs)
		}
	}
}

func TestDefaultFailurePolicy(t *testing.T) {
	p := testjobs.MakeFailurePolicy(2).Rule("r", kubeflowv1.FailJobAction).Obj()
	p.Rules[0].OnPodConditions = []kubeflowv1.FailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}
	job := testjobs.MakePyTorchJob("j", "ns").Workers(1).FailurePolicy(p).Obj()
	job.ApplyDefaults()
	got := job.Spec.RunPolicy.FailurePolicy
	if got.RestartStrategy != kubeflowv1.RestartStrategyBlockingRecreate || got.Rules[0].OnPodConditions[0].Status != corev1.ConditionTrue {
		t.Errorf("defaults not applied: %+v", got)
	}
	plain := testjobs.MakePyTorchJob("j", "ns").Workers(1).Obj()
	plain.ApplyDefaults()
	if plain.Spec.RunPolicy.FailurePolicy != nil {
		t.Errorf("a job without a failure policy got one: %+v", plain.Spec.RunPolicy.FailurePolicy)
	}
}

// A failure policy runs pods with restartPolicy Never: a replica's own
// restartPolicy is applied only through a UseReplicaRestartPolicy rule
// covering it, and the webhook warns about every one left unused.
func TestFailurePolicyWarnsOfUnusedRestartPolicies(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	warning := func(rt, policy string) string {
		return "spec.pytorchReplicaSpecs[" + rt + "].restartPolicy: " + policy + " is not applied: with runPolicy.failurePolicy the pods run with " +
			"restartPolicy Never and the failure policy decides every restart; add a rule with action UseReplicaRestartPolicy for " + rt +
			" to hand its failures back to it"
	}
	for _, tc := range []struct {
		name string
		job  *kubeflowv1.PyTorchJob
		want []string
	}{
		{"no failure policy", testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj(), nil},
		{"Never", testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyNever).FailurePolicy(fp(1).Obj()).Obj(), nil},
		{"OnFailure and ExitCode unused",
			testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).FailurePolicy(fp(1).Obj()).Obj(),
			[]string{warning("Master", "OnFailure"), warning("Worker", "OnFailure")}},
		{"handed back for Worker only",
			testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyExitCode).FailurePolicy(
				fp(1).Rule("back", kubeflowv1.UseReplicaRestartPolicyAction, kubeflowv1.PyTorchJobReplicaTypeWorker).Obj()).Obj(),
			[]string{warning("Master", "ExitCode")}},
		{"handed back for every type",
			testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).FailurePolicy(
				fp(1).Rule("back", kubeflowv1.UseReplicaRestartPolicyAction).Obj()).Obj(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs, warnings := ValidatePyTorchJob(nil, tc.job)
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			if diff := cmp.Diff(tc.want, []string(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// With enableDynamicWorker a failed Worker is ignored (v1), so a rule that
// names Worker is refused and one for every type is warned about.
func TestFailurePolicyDynamicWorker(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	dynamic := func(p *kubeflowv1.FailurePolicy) *kubeflowv1.TFJob {
		return testjobs.WithFailurePolicy(testjobs.MakeTFJob("t", "ns").Chief(1).Workers(2).EnableDynamicWorker(true).RestartPolicy(kubeflowv1.RestartPolicyNever).Obj(), p)
	}
	rules := field.NewPath("spec", "runPolicy", "failurePolicy", "rules")
	errs, _ := ValidateTFJob(nil, dynamic(fp(1).Rule("chief", kubeflowv1.FailJobAction, kubeflowv1.TFJobReplicaTypeChief, kubeflowv1.TFJobReplicaTypeWorker).Obj()))
	want := field.ErrorList{field.Forbidden(rules.Index(0).Child("targetReplicaTypes").Index(1),
		"with spec.enableDynamicWorker a failed Worker is ignored, as in v1: no rule can act on one")}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("a rule naming Worker: errors (-want +got):\n%s", diff)
	}
	errs, warnings := ValidateTFJob(nil, dynamic(fp(1).Rule("all", kubeflowv1.RestartJobAction).Obj()))
	if len(errs) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "spec.runPolicy.failurePolicy.rules[0]: with spec.enableDynamicWorker") {
		t.Errorf("a rule for every type: errors %v, warnings %q", errs, warnings)
	}
	static := testjobs.WithFailurePolicy(testjobs.MakeTFJob("t", "ns").Chief(1).Workers(2).RestartPolicy(kubeflowv1.RestartPolicyNever).Obj(),
		fp(1).Rule("w", kubeflowv1.FailJobAction, kubeflowv1.TFJobReplicaTypeWorker).Obj())
	if errs, warnings := ValidateTFJob(nil, static); len(errs) != 0 || len(warnings) != 0 {
		t.Errorf("without enableDynamicWorker: errors %v, warnings %q", errs, warnings)
	}
}
