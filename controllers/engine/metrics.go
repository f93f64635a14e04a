package engine

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
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
)

var registerOnce sync.Once

// registerMetrics adds the job metrics to controller-runtime's registry once.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(jobsCreated, jobsDeleted, jobsSuccessful, jobsFailed, jobsRestarted, jobStartupSeconds)
	})
}
