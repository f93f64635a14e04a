// Package eventrecorder records core/v1 Events the way v1's recorder did
// (client-go's correlator: a repeat patches the first Event's count, similar
// Events are aggregated, each object is rate-limited) without v1's two
// faults under load: client-go's broadcaster drops an Event as soon as 1,000
// wait for its single writer, and that writer sends them one at a time, in
// JSON. Here Events wait in one queue per writer, a few writers work in
// parallel (each object's Events stay in order on one writer), and they are
// sent in protobuf.
package eventrecorder

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/seed-d8a409e9/training-operator/internal/kube/apiretry"
)

// Options tune a Sink; zero values take the defaults.
type Options struct {
	// Writers is the number of Events written at once (default 16, the
	// reconcilers' concurrency: on a saturated API server a write can take
	// a second, and a busy operator records several Events a second).
	Writers int
	// MaxQueued bounds the Events waiting for the API server, so that an
	// API server down for hours cannot exhaust the operator's memory
	// (default 20,000, about 20 MB). A drop beyond it is logged and counted.
	MaxQueued int
	// MaxTries and RetryDelay: a write that fails in transit is tried again,
	// as client-go's recorder does (12 tries, 10 s apart by default).
	MaxTries   int
	RetryDelay time.Duration
	// DrainTimeout is how long Start keeps writing queued Events after its
	// context ends (default 5 s), so a clean shutdown does not lose them.
	DrainTimeout time.Duration
	Clock        clock.Clock
}

func (o Options) withDefaults() Options {
	if o.Writers <= 0 {
		o.Writers = 16
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 20000
	}
	if o.MaxTries <= 0 {
		o.MaxTries = 12
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 10 * time.Second
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 5 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

var (
	dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "training_operator_events_dropped_total",
		Help: "Events not recorded because too many were waiting for the API server",
	})
	waiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "training_operator_events_waiting",
		Help: "Events recorded and not yet written to the API server",
	})
)

func init() { ctrlmetrics.Registry.MustRegister(dropped, waiting) }

// Sink queues Events and writes them; it is a manager Runnable.
type Sink struct {
	events     corev1client.EventsGetter
	scheme     *runtime.Scheme
	correlator *record.EventCorrelator
	log        logr.Logger
	opts       Options

	mu     sync.Mutex
	queues [][]*corev1.Event // one FIFO per writer
	queued int
	wake   []chan struct{} // one per writer, capacity 1
}

// ForConfig is a Sink whose Events go to the API server of cfg, in
// protobuf, over httpClient (the manager's, to share its connections).
func ForConfig(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, log logr.Logger, opts Options) (*Sink, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return New(c, scheme, log, opts), nil
}

// New is a Sink writing through events.
func New(events corev1client.EventsGetter, scheme *runtime.Scheme, log logr.Logger, opts Options) *Sink {
	opts = opts.withDefaults()
	s := &Sink{
		events:     events,
		scheme:     scheme,
		correlator: record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: opts.Clock}),
		log:        log,
		opts:       opts,
		queues:     make([][]*corev1.Event, opts.Writers),
		wake:       make([]chan struct{}, opts.Writers),
	}
	for i := range s.wake {
		s.wake[i] = make(chan struct{}, 1)
	}
	return s
}

// Recorder records Events from one component (v1's Source.Component, the
// controller's name).
func (s *Sink) Recorder(component string) *Recorder {
	return &Recorder{sink: s, source: corev1.EventSource{Component: component}}
}

// Recorder is the EventRecorder the controllers use.
type Recorder struct {
	sink   *Sink
	source corev1.EventSource
}

// Event queues an Event about obj; it never blocks on the API server.
func (r *Recorder) Event(obj runtime.Object, eventType, reason, message string) {
	s := r.sink
	ref, err := reference.GetReference(s.scheme, obj)
	if err != nil {
		s.log.Error(err, "cannot reference the object of an event", "reason", reason, "message", message)
		return
	}
	if !util.ValidateEventType(eventType) {
		s.log.Error(nil, "unsupported event type", "type", eventType, "reason", reason)
		return
	}
	s.log.V(1).Info(message, "type", eventType, "object", ref, "reason", reason)
	s.enqueue(makeEvent(ref, r.source, metav1.NewTime(s.opts.Clock.Now()), eventType, reason, message))
}

// Eventf is Event with a formatted message (client-go's
// record.EventRecorder, which Kueue's job framework records through).
func (r *Recorder) Eventf(obj runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf; the Events written carry no annotations.
func (r *Recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventType, reason, messageFmt string, args ...any) {
	r.Eventf(obj, eventType, reason, messageFmt, args...)
}

// makeEvent is the Event client-go's recorder makes: same name, namespace,
// timestamps and reporting fields, so kubectl shows what v1 showed.
func makeEvent(ref *corev1.ObjectReference, source corev1.EventSource, now metav1.Time, eventType, reason, message string) *corev1.Event {
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, now.UnixNano()), Namespace: ns},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                eventType,
		Source:              source,
		ReportingController: source.Component,
		ReportingInstance:   source.Host,
	}
}

// writerOf keeps each object's Events on one writer, in order: the
// correlator turns a repeat into a patch of the Event written before it.
func (s *Sink) writerOf(ev *corev1.Event) int {
	h := fnv.New32a()
	key := string(ev.InvolvedObject.UID)
	if key == "" {
		key = ev.InvolvedObject.Namespace + "/" + ev.InvolvedObject.Name
	}
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(s.queues)))
}

func (s *Sink) enqueue(ev *corev1.Event) {
	w := s.writerOf(ev)
	s.mu.Lock()
	if s.queued >= s.opts.MaxQueued {
		s.mu.Unlock()
		dropped.Inc()
		s.log.Error(nil, "event dropped: too many events are waiting for the API server",
			"waiting", s.opts.MaxQueued, "object", ev.InvolvedObject, "reason", ev.Reason, "message", ev.Message)
		return
	}
	s.queues[w] = append(s.queues[w], ev)
	s.queued++
	waiting.Set(float64(s.queued))
	s.mu.Unlock()
	select {
	case s.wake[w] <- struct{}{}:
	default:
	}
}

// next takes writer w's oldest Event, nil if none.
func (s *Sink) next(w int) *corev1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[w]
	if len(q) == 0 {
		return nil
	}
	ev := q[0]
	q[0] = nil
	s.queues[w] = q[1:]
	if len(s.queues[w]) == 0 {
		s.queues[w] = nil // let the backing array go
	}
	s.queued--
	waiting.Set(float64(s.queued))
	return ev
}

// Start runs the writers until ctx ends, then writes what is queued for up
// to DrainTimeout, one try each.
func (s *Sink) Start(ctx context.Context) error {
	drain, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var wg sync.WaitGroup
	for w := range s.queues {
		wg.Go(func() { s.run(ctx, drain, w) })
	}
	<-ctx.Done()
	timer := s.opts.Clock.NewTimer(s.opts.DrainTimeout)
	defer timer.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-timer.C():
		cancel()
		<-done
	}
	s.mu.Lock()
	left := s.queued
	s.mu.Unlock()
	if left > 0 {
		s.log.Info("events not written before shutdown", "count", left)
	}
	return nil
}

// NeedLeaderElection is false: only a leader's controllers record Events,
// and a standby's queue stays empty.
func (s *Sink) NeedLeaderElection() bool { return false }

func (s *Sink) run(ctx, drain context.Context, w int) {
	for {
		ev := s.next(w)
		if ev == nil {
			if ctx.Err() != nil {
				return // drained
			}
			select {
			case <-ctx.Done():
			case <-s.wake[w]:
			}
			continue
		}
		if ctx.Err() != nil {
			if drain.Err() != nil {
				return
			}
			s.record(drain, ev, 1)
			continue
		}
		s.record(ctx, ev, s.opts.MaxTries)
	}
}

// record correlates ev and writes it, trying up to tries times while the
// API server cannot be reached; it is client-go's recordToSink.
func (s *Sink) record(ctx context.Context, ev *corev1.Event, tries int) {
	result, err := s.correlator.EventCorrelate(ev)
	if err != nil {
		s.log.Error(err, "correlating an event")
	}
	if result.Skip {
		return
	}
	for try := 1; ; try++ {
		if s.write(ctx, result.Event, result.Patch) {
			return
		}
		if try >= tries {
			s.log.Error(nil, "event not written: the API server could not be reached", "tries", try,
				"object", ev.InvolvedObject, "reason", ev.Reason, "message", ev.Message)
			return
		}
		delay := s.opts.RetryDelay
		if try == 1 {
			// Spread the clients that lost the API server at the same moment.
			delay = time.Duration(rand.Float64() * float64(delay))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.opts.Clock.After(delay):
		}
	}
}

// write creates the Event, or patches the one it repeats. It reports false
// when trying again may succeed.
func (s *Sink) write(ctx context.Context, ev *corev1.Event, patch []byte) bool {
	events := s.events.Events(ev.Namespace)
	var written *corev1.Event
	var err error
	if ev.Count > 1 {
		written, err = events.Patch(ctx, ev.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	}
	if ev.Count <= 1 || apierrors.IsNotFound(err) {
		// The repeated Event is gone (TTL): record it anew.
		create := ev.DeepCopy()
		create.ResourceVersion = ""
		written, err = events.Create(ctx, create, metav1.CreateOptions{})
	}
	if err == nil {
		s.correlator.UpdateState(written)
		return true
	}
	switch {
	case apierrors.IsAlreadyExists(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		s.log.V(5).Info("event refused", "event", ev.Name, "error", err.Error())
		return true
	case apiretry.Refused(err):
		s.log.Error(err, "event refused by the API server", "object", ev.InvolvedObject, "reason", ev.Reason, "message", ev.Message)
		return true
	case ctx.Err() != nil:
		return true
	}
	s.log.Error(err, "writing an event (will try again)", "event", fmt.Sprintf("%s/%s", ev.Namespace, ev.Name))
	return false
}
