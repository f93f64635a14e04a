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
	"io"
	"net"
	"sync"
	"time"
)

// forwarder is the suite's stand-in for the operator's webhook Service: one
// fixed address that passes TLS connections through to the first operator
// replica that accepts them. Every replica writes the same clientURL into
// the webhook configurations, so two replicas do not fight over it, and a
// killed replica's webhooks fail over like behind a Service.
type forwarder struct {
	ln       net.Listener
	mu       sync.Mutex
	backends []string
}

func startForwarder() (*forwarder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &forwarder{ln: ln}
	go f.serve()
	return f, nil
}

// url is the webhook clientURL to configure (the operator's certificate
// names 127.0.0.1).
func (f *forwarder) url() string { return "https://" + f.ln.Addr().String() }

func (f *forwarder) setBackends(addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backends = addrs
}

func (f *forwarder) close() { _ = f.ln.Close() }

func (f *forwarder) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.handle(c)
	}
}

func (f *forwarder) handle(c net.Conn) {
	defer c.Close()
	f.mu.Lock()
	backends := append([]string(nil), f.backends...)
	f.mu.Unlock()
	var up net.Conn
	for _, b := range backends {
		var err error
		if up, err = net.DialTimeout("tcp", b, time.Second); err == nil {
			break
		}
	}
	if up == nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}
