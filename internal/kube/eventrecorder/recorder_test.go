package eventrecorder

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
	}
}

// started runs s until the test ends, and returns a function that stops it
// and waits for Start to return.
func started(t *testing.T, s *Sink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Start(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// creates records the Events the fake API server created, in order.
type creates struct {
	mu     sync.Mutex
	events []*corev1.Event
}

func (c *creates) reactor(a k8stesting.Action) (bool, runtime.Object, error) {
	ev := a.(k8stesting.CreateAction).GetObject().(*corev1.Event)
	c.mu.Lock()
	c.events = append(c.events, ev.DeepCopy())
	c.mu.Unlock()
	return false, nil, nil // the tracker stores it
}

func (c *creates) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// recording is a Sink over a fake API server whose creates c records.
func recording(t *testing.T, opts Options) (*fake.Clientset, *creates, *Sink) {
	t.Helper()
	cs := fake.NewClientset()
	c := &creates{}
	cs.PrependReactor("create", "events", c.reactor)
	return cs, c, New(cs.CoreV1(), scheme.Scheme, logr.Discard(), opts)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// client-go's broadcaster drops every Event beyond 1,000 waiting for its one
// writer; none is dropped here while the API server holds its answers.
func TestNoEventDroppedWhileTheAPIServerIsSlow(t *testing.T) {
	const n = 1500
	cs := fake.NewClientset()
	release := make(chan struct{})
	var c creates
	cs.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		<-release
		return c.reactor(a)
	})
	s := New(cs.CoreV1(), scheme.Scheme, logr.Discard(), Options{})
	started(t, s)
	for i := range n {
		s.Recorder("pytorchjob-controller").Event(pod(fmt.Sprintf("p%d", i)), corev1.EventTypeNormal, "Created", "made")
	}
	close(release)
	// Fails on a stall, not on slowness: a loaded machine under -race takes
	// its time, a dropped Event never arrives.
	last, stalled := -1, time.Now()
	for got := c.count(); got != n; got = c.count() {
		if got != last {
			last, stalled = got, time.Now()
		} else if time.Since(stalled) > 20*time.Second {
			t.Fatalf("%d of %d events written, none for 20s", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	list, err := cs.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != n {
		t.Fatalf("stored events = %d (%v), want %d", len(list.Items), err, n)
	}
}

// A repeat patches the first Event's count, as v1's recorder did.
func TestRepeatPatchesTheFirstEvent(t *testing.T) {
	cs, c, s := recording(t, Options{})
	started(t, s)
	rec := s.Recorder("pytorchjob-controller")
	rec.Event(pod("a"), corev1.EventTypeWarning, "Exited", "code 1")
	waitFor(t, "the first event", func() bool { return c.count() == 1 })
	rec.Event(pod("a"), corev1.EventTypeWarning, "Exited", "code 1")
	waitFor(t, "count 2", func() bool {
		list, _ := cs.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
		return len(list.Items) == 1 && list.Items[0].Count == 2
	})
	if c.count() != 1 {
		t.Errorf("creates = %d, want 1 (the repeat is a patch)", c.count())
	}
}

// One object's Events reach the API server in the order they were recorded.
func TestOneObjectsEventsStayInOrder(t *testing.T) {
	cs := fake.NewClientset()
	var c creates
	cs.PrependReactor("create", "events", c.reactor)
	s := New(cs.CoreV1(), scheme.Scheme, logr.Discard(), Options{Writers: 8})
	started(t, s)
	const n = 8 // below the correlator's aggregation threshold
	for i := range n {
		for _, name := range []string{"a", "b", "c"} {
			s.Recorder("c").Event(pod(name), corev1.EventTypeNormal, fmt.Sprintf("Step%d", i), "m")
		}
	}
	waitFor(t, "all events", func() bool { return c.count() == 3*n })
	next := map[string]int{}
	for _, ev := range c.events {
		if want := fmt.Sprintf("Step%d", next[ev.InvolvedObject.Name]); ev.Reason != want {
			t.Fatalf("%s: event %q arrived where %q was due", ev.InvolvedObject.Name, ev.Reason, want)
		}
		next[ev.InvolvedObject.Name]++
	}
}

// A write the API server could not take is tried again; one it refused
// for the Event's own sake is not.
func TestServerTroubleIsRetriedRefusalIsNot(t *testing.T) {
	cs := fake.NewClientset()
	var mu sync.Mutex
	tries := map[string]int{}
	cs.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ev := a.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		mu.Lock()
		defer mu.Unlock()
		tries[ev.InvolvedObject.Name]++
		switch {
		case ev.InvolvedObject.Name == "busy" && tries["busy"] < 3:
			return true, nil, apierrors.NewServiceUnavailable("busy")
		case ev.InvolvedObject.Name == "bad":
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, ev.Name, nil)
		}
		return false, nil, nil
	})
	s := New(cs.CoreV1(), scheme.Scheme, logr.Discard(), Options{RetryDelay: time.Millisecond})
	started(t, s)
	s.Recorder("c").Event(pod("busy"), corev1.EventTypeNormal, "R", "m")
	s.Recorder("c").Event(pod("bad"), corev1.EventTypeNormal, "R", "m")
	waitFor(t, "the busy event written", func() bool {
		list, _ := cs.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
		return len(list.Items) == 1
	})
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if tries["busy"] != 3 || tries["bad"] != 1 {
		t.Errorf("tries = %v, want busy 3, bad 1", tries)
	}
}

// Events queued when the operator stops are still written.
func TestShutdownWritesWhatIsQueued(t *testing.T) {
	cs := fake.NewClientset()
	var c creates
	cs.PrependReactor("create", "events", c.reactor)
	s := New(cs.CoreV1(), scheme.Scheme, logr.Discard(), Options{})
	for i := range 50 {
		s.Recorder("c").Event(pod(fmt.Sprintf("p%d", i)), corev1.EventTypeNormal, "R", "m")
	}
	stop := started(t, s)
	stop()
	if c.count() != 50 {
		t.Errorf("written before Start returned = %d, want 50", c.count())
	}
}

// The Event is the one client-go's recorder makes: kubectl shows what v1 showed.
func TestEventFields(t *testing.T) {
	_, c, s := recording(t, Options{})
	started(t, s)
	s.Recorder("pytorchjob-controller").Event(pod("a"), corev1.EventTypeNormal, "SuccessfulCreatePod", "Created pod: a")
	waitFor(t, "the event", func() bool { return c.count() == 1 })
	ev := c.events[0]
	if !strings.HasPrefix(ev.Name, "a.") || ev.Namespace != "ns" || ev.Count != 1 || ev.FirstTimestamp != ev.LastTimestamp ||
		ev.Source.Component != "pytorchjob-controller" || ev.ReportingController != "pytorchjob-controller" ||
		ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.UID != "uid-a" || ev.Type != corev1.EventTypeNormal {
		t.Errorf("event = %+v", ev)
	}
}

// Events go to the API server in protobuf.
func TestEventsAreSentInProtobuf(t *testing.T) {
	var mu sync.Mutex
	var contentTypes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		contentTypes = append(contentTypes, r.Header.Get("Content-Type"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(&corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", ResourceVersion: "1"}})
	}))
	defer srv.Close()
	s, err := ForConfig(&rest.Config{Host: srv.URL}, srv.Client(), scheme.Scheme, logr.Discard(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	started(t, s)
	s.Recorder("c").Event(pod("a"), corev1.EventTypeNormal, "R", "m")
	waitFor(t, "a request", func() bool { mu.Lock(); defer mu.Unlock(); return len(contentTypes) == 1 })
	if contentTypes[0] != runtime.ContentTypeProtobuf {
		t.Errorf("Content-Type = %q, want %q", contentTypes[0], runtime.ContentTypeProtobuf)
	}
}
