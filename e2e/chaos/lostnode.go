/*
Copyright 2026 The training-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/harness/cluster"
)

// loseAfter is how long after its deletion a hanging pod's node is lost:
// past the operator's stuck report and the jobs' lost-pod timeout, so a
// force-delete on the still Ready node would be seen.
const loseAfter = 25 * time.Second

// lostPod is what the harness did to an fp-lostnode job's pod, and saw.
type lostPod struct {
	UID  string `json:"uid"`
	Node string `json:"node"`
	// Annotated is when its kubelet was taken away; Deleting and Gone are
	// when the pod was seen terminating and gone; NodeLost when its node
	// was marked lost (zero: never).
	Annotated time.Time `json:"annotated"`
	Deleting  time.Time `json:"deleting"`
	// Finished: it had finished when deleted (the API deletes such a pod
	// at once).
	Finished bool `json:"finished,omitempty"`
	// NodeLostSpans are when its node was lost, for this pod or another
	// job's: a force-delete in any of them is right.
	NodeLostSpans []lostSpan `json:"nodeLostSpans,omitempty"`
	NodeLost      time.Time  `json:"nodeLost"`
	Gone          time.Time  `json:"gone"`
}

// lostSpan is when a node was lost (To: zero while it still is).
type lostSpan struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// nodeLoser takes the kubelet of each fp-lostnode job's designated pod of
// attempt 0 away (KubeletLostAnnotation: its deletion hangs, as on a lost
// node), and loses the pod's node loseAfter after the restart deleted it;
// the node comes back once no hanging pod is on it.
type nodeLoser struct {
	ctx     context.Context
	e       *env
	targets map[string]string // pod namespace/name -> job key

	mu    sync.Mutex
	pods  map[string]*lostPod   // job key -> its pod
	lost  map[string]int        // node -> hanging pods that lost it
	spans map[string][]lostSpan // node -> when it was lost
	nodes sync.WaitGroup
	// apply serialises the node writes, each of which writes the state
	// the counts in lost want at that time.
	apply sync.Mutex
}

func newNodeLoser(ctx context.Context, e *env, jobs []plannedJob) *nodeLoser {
	l := &nodeLoser{ctx: ctx, e: e, targets: map[string]string{}, pods: map[string]*lostPod{}, lost: map[string]int{},
		spans: map[string][]lostSpan{}}
	for _, j := range jobs {
		if j.expect.LostPod != "" {
			l.targets[j.obj.GetNamespace()+"/"+j.expect.LostPod] = j.key()
		}
	}
	return l
}

// observe is a recorder pod hook.
func (l *nodeLoser) observe(p podObs) {
	ns, _, _ := strings.Cut(p.Job, "/")
	job, ok := l.targets[ns+"/"+p.Name]
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.pods[job]
	switch {
	case st == nil:
		if p.Attempt == "0" && p.live() && p.Phase == corev1.PodRunning {
			st = &lostPod{UID: p.UID}
			l.pods[job] = st
			go l.hang(ns, p.Name, st)
		}
	case p.UID != st.UID:
	case p.Gone && st.Gone.IsZero():
		st.Gone = p.At
		if !st.NodeLost.IsZero() {
			l.nodes.Go(func() { l.release(st.Node) })
		}
	case p.Deleting && st.Deleting.IsZero():
		st.Deleting, st.Finished = p.At, finished(p.Phase)
		l.nodes.Go(func() { l.loseLater(job, st) })
	}
}

// hang takes the pod's kubelet away and notes its node.
func (l *nodeLoser) hang(ns, name string, st *lostPod) {
	ctx, cancel := context.WithTimeout(l.ctx, 20*time.Second)
	defer cancel()
	var pod corev1.Pod
	if err := l.e.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod); err != nil || string(pod.UID) != st.UID {
		log.Printf("lost node: pod %s/%s: %v", ns, name, err)
		return
	}
	// It must still run when the restart deletes it: a finished pod is
	// deleted at once, kubelet or not (a JAX job's workers all exit).
	patch := fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{%q:"true",%q:null}}}`, st.UID, cluster.KubeletLostAnnotation, cluster.ExitCodeAnnotation)
	if err := l.e.client.Patch(ctx, &pod, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		log.Printf("lost node: annotating pod %s/%s: %v", ns, name, err)
		return
	}
	l.mu.Lock()
	st.Node, st.Annotated = pod.Spec.NodeName, time.Now()
	l.mu.Unlock()
}

// loseLater loses the pod's node loseAfter after its deletion, unless it
// is gone by then.
func (l *nodeLoser) loseLater(job string, st *lostPod) {
	select {
	case <-l.ctx.Done():
		return
	case <-time.After(loseAfter):
	}
	l.mu.Lock()
	node := st.Node
	if !st.Gone.IsZero() || node == "" {
		l.mu.Unlock()
		return
	}
	l.lost[node]++
	first := l.lost[node] == 1
	st.NodeLost = time.Now()
	if first {
		l.spans[node] = append(l.spans[node], lostSpan{From: st.NodeLost})
	}
	l.mu.Unlock()
	if first {
		l.sync(node)
	}
}

// release gives a node back once no hanging pod holds it lost.
func (l *nodeLoser) release(node string) {
	l.mu.Lock()
	l.lost[node]--
	last := l.lost[node] == 0
	l.mu.Unlock()
	if last {
		l.sync(node)
	}
}

// sync makes the node lost while a hanging pod holds it, else Ready again
// (then its lost span ends).
func (l *nodeLoser) sync(node string) {
	l.apply.Lock()
	defer l.apply.Unlock()
	l.mu.Lock()
	lost := l.lost[node] > 0
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := l.e.cluster.SetNodeLost(ctx, node, lost); err != nil {
		log.Printf("lost node: setting %s lost=%v: %v", node, lost, err)
	}
	if lost {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.spans[node]; len(s) > 0 && s[len(s)-1].To.IsZero() {
		s[len(s)-1].To = time.Now()
	}
}

// stop gives every node back and returns what happened to each pod, with
// the spans its node was lost (by any job's pod).
func (l *nodeLoser) stop() map[string]lostPod {
	l.nodes.Wait()
	l.mu.Lock()
	var still []string
	for node, n := range l.lost {
		if n > 0 {
			still = append(still, node)
			l.lost[node] = 0
		}
	}
	l.mu.Unlock()
	for _, node := range still {
		l.sync(node)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]lostPod, len(l.pods))
	for k, v := range l.pods {
		lp := *v
		lp.NodeLostSpans = append([]lostSpan(nil), l.spans[lp.Node]...)
		out[k] = lp
	}
	return out
}
