package engine

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Job metrics keep v1's names and labels; they live in controller-runtime's
// registry so /metrics serves them, and each is counted once per transition.
var (
	jobsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_jobs_created_total",
		Help: "Counts number of jobs created",
	}, []string{"job_namespace", "framework"})
	jobsDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_jobs_deleted_total",
		Help: "Counts number of jobs deleted",
	}, []string{"job_namespace", "framework"})
	jobsSuccessful = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_jobs_successful_total",
		Help: "Counts number of jobs successful",
	}, []string{"job_namespace", "framework"})
	jobsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_jobs_failed_total",
		Help: "Counts number of jobs failed",
	}, []string{"job_namespace", "framework"})
	jobsRestarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_jobs_restarted_total",
		Help: "Counts number of jobs restarted",
	}, []string{"job_namespace", "framework"})
	jobStartupSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "training_operator_job_startup_seconds",
		Help:    "Time from job creation until the job is first Running",
		Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
	}, []string{"job_namespace", "framework"})
	// The failure policy's: by action and framework, no per-job labels.
	failurePolicyActions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_job_failure_policy_actions_total",
		Help: "Counts failure-policy decisions (FailJob, RestartJob, RestartJobAndIgnoreMaxRestarts, MaxRestartsReached, MaxTotalRestartsReached)",
	}, []string{"framework", "action"})
	jobRestartSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "training_operator_job_restart_duration_seconds",
		Help:    "Time from a whole-job restart's decision until every pod of the new attempt is Running",
		Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
	}, []string{"framework"})
	// Pods the API server refused, by its reason: a quota or an admission
	// denial keeps a job without pods, which no job condition says.
	podCreateFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "training_operator_pod_create_failures_total",
		Help: "Counts pods the operator failed to create, by framework and the API server's reason (Forbidden: quota or admission denial)",
	}, []string{"framework", "reason"})
)

// podCreateReasons bounds the reason label: a webhook may answer any
// reason string, so unlisted ones are reported as Other.
var podCreateReasons = map[metav1.StatusReason]bool{
	metav1.StatusReasonForbidden: true, metav1.StatusReasonInvalid: true, metav1.StatusReasonConflict: true,
	metav1.StatusReasonTimeout: true, metav1.StatusReasonServerTimeout: true, metav1.StatusReasonTooManyRequests: true,
	metav1.StatusReasonInternalError: true, metav1.StatusReasonServiceUnavailable: true, metav1.StatusReasonNotFound: true,
	metav1.StatusReasonBadRequest: true, metav1.StatusReasonUnauthorized: true, metav1.StatusReasonRequestEntityTooLarge: true,
}

// countPodCreateFailure counts a pod create the API server did not accept.
func countPodCreateFailure(framework string, err error) {
	reason := apierrors.ReasonForError(err)
	label := string(reason)
	switch {
	case reason == metav1.StatusReasonUnknown:
		label = "Unknown" // no API status: a transport error or a timeout on our side
	case !podCreateReasons[reason]:
		label = "Other"
	}
	podCreateFailures.WithLabelValues(framework, label).Inc()
}

var registerOnce sync.Once

// registerMetrics adds the job metrics to controller-runtime's registry once.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(jobsCreated, jobsDeleted, jobsSuccessful, jobsFailed, jobsRestarted, jobStartupSeconds,
			failurePolicyActions, jobRestartSeconds, podCreateFailures)
	})
}

// externalJobs remembers the jobs managed by another controller that this
// process has counted as created (jobRecord.external). Their status never
// gets our Created condition, which counts the jobs we manage once for good,
// so they are counted once per job and process: v1 counted every job in its
// create predicate, which also fires for each job listed after a restart.
type externalJobs struct{ kindMemory }

// first reports whether this job (a new UID under the name) is seen for the first time.
func (e externalJobs) first(key types.NamespacedName, uid types.UID) bool {
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	rec := e.m.record(e.refOf(key, uid), true)
	if rec.external {
		return false
	}
	rec.external = true
	return true
}
