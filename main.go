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

// Command training-operator runs the controllers of the Kubeflow Training
// Operator v1 job kinds (kubeflow.org/v1; the table of kinds is package
// kinds).
//
// Settings come from an optional config.training-operator.io/v1alpha1
// Configuration file (--config) and from the v1 command-line flags, which
// override the file when given explicitly.
package main

import (
	"flag"
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/internal/operator"
	"github.com/seed-d8a409e9/training-operator/internal/process/lazylog"
)

var setupLog = ctrl.Log.WithName("setup")

func main() {
	// Production logging (JSON, info level) by default; v1's stack-trace
	// threshold (DPanic) keeps ordinary error logs on one line.
	logOpts := zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}
	logOpts.BindFlags(flag.CommandLine)
	var flags config.Flags
	flags.Bind(flag.CommandLine)
	releaseOnly := flag.Bool("release-pod-finalizers", false,
		"Remove the pod-tracking finalizer from every pod of the operator's jobs (in --namespace, or all namespaces) and exit. "+
			"The chart runs it when it is uninstalled.")
	// --kubeconfig is registered on flag.CommandLine by controller-runtime.
	flag.Parse()

	logger := lazylog.New(zap.New(zap.UseFlagOptions(&logOpts)))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	if *releaseOnly {
		os.Exit(releasePodFinalizers(flags.Namespace))
	}

	cfg, err := config.Build(flags.ConfigFile, &flags, config.ExplicitFlags(flag.CommandLine))
	if err != nil {
		setupLog.Error(err, "unable to load configuration", "file", flags.ConfigFile)
		os.Exit(1)
	}
	// Logged as a plain map: the logger renders runtime.Objects as object references.
	effective, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cfg)
	if err != nil {
		setupLog.Error(err, "unable to encode configuration")
		os.Exit(1)
	}
	setupLog.Info("effective configuration", "configuration", effective)

	restCfg, err := ctrl.GetConfig()
	if err != nil {
		setupLog.Error(err, "unable to load kubeconfig")
		os.Exit(1)
	}
	op, err := operator.New(restCfg, cfg, operator.Overrides{})
	if err != nil {
		setupLog.Error(err, "unable to set up the operator")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	if err := op.Manager.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
	setupLog.Info("stopping")
}

// releasePodFinalizers is the uninstall mode: nothing is left to count the
// pods, so nothing may keep them from being deleted.
func releasePodFinalizers(namespace string) int {
	ctx := ctrl.SetupSignalHandler()
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{})
	if err != nil {
		setupLog.Error(err, "unable to create a client")
		return 1
	}
	n, err := engine.ReleaseAllPods(ctx, c, namespace)
	if err != nil {
		setupLog.Error(err, "unable to release pods", "namespace", namespace)
		return 1
	}
	setupLog.Info("released the pod-tracking finalizer", "pods", n, "namespace", namespace)
	return 0
}
