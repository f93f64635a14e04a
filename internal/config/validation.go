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

package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// leaderElectionJitterFactor mirrors client-go's leaderelection.JitterFactor:
// renewDeadline must exceed retryPeriod times this factor.
const leaderElectionJitterFactor = 1.2

// Validate checks a defaulted Configuration and returns every problem with
// its field path (for example enabledSchemes[2], clientConnection.qps,
// webhook.port, controller.concurrency[PyTorchJob]).
func Validate(cfg *configv1alpha1.Configuration) field.ErrorList {
	var errs field.ErrorList

	if cfg.Namespace != "" {
		errs = append(errs, dnsLabel(field.NewPath("namespace"), cfg.Namespace)...)
	}
	errs = append(errs, validateEnabledSchemes(field.NewPath("enabledSchemes"), cfg.EnabledSchemes)...)
	errs = append(errs, validateGangScheduling(field.NewPath("gangScheduling"), &cfg.GangScheduling)...)
	errs = append(errs, validateController(field.NewPath("controller"), &cfg.Controller)...)
	errs = append(errs, validateClientConnection(field.NewPath("clientConnection"), &cfg.ClientConnection)...)
	errs = append(errs, validateWebhook(field.NewPath("webhook"), &cfg.Webhook)...)
	errs = append(errs, validateBindAddress(field.NewPath("metrics", "bindAddress"), cfg.Metrics.BindAddress)...)
	healthPath := field.NewPath("health", "probeBindAddress")
	errs = append(errs, validateBindAddress(healthPath, cfg.Health.ProbeBindAddress)...)
	if fixedPort(cfg.Health.ProbeBindAddress) && cfg.Health.ProbeBindAddress == cfg.Metrics.BindAddress {
		errs = append(errs, field.Invalid(healthPath, cfg.Health.ProbeBindAddress, "must differ from metrics.bindAddress"))
	}
	errs = append(errs, validateLeaderElection(field.NewPath("leaderElection"), &cfg.LeaderElection)...)
	errs = append(errs, validatePyTorchInitContainer(field.NewPath("pytorchInitContainer"), &cfg.PyTorchInitContainer)...)
	if cfg.MPI.KubectlDeliveryImage == "" {
		errs = append(errs, field.Required(field.NewPath("mpi", "kubectlDeliveryImage"), ""))
	}
	errs = append(errs, validateKueue(field.NewPath("kueue"), &cfg.Kueue)...)
	return errs
}

func validateKueue(p *field.Path, k *configv1alpha1.Kueue) field.ErrorList {
	var errs field.ErrorList
	switch k.Integration {
	case configv1alpha1.KueueIntegrationBuiltin:
		if k.ConfigFile != "" {
			errs = append(errs, field.Invalid(p.Child("configFile"), k.ConfigFile, "is read only with integration \"operator\""))
		}
	case configv1alpha1.KueueIntegrationOperator:
	default:
		errs = append(errs, field.NotSupported(p.Child("integration"), k.Integration, []configv1alpha1.KueueIntegration{
			configv1alpha1.KueueIntegrationBuiltin, configv1alpha1.KueueIntegrationOperator}))
	}
	return errs
}

func validateEnabledSchemes(p *field.Path, schemes []string) field.ErrorList {
	var errs field.ErrorList
	if len(schemes) == 0 {
		return append(errs, field.Required(p, "at least one scheme must be enabled"))
	}
	seen := map[string]bool{}
	for i, s := range schemes {
		c, ok := NormalizeScheme(s)
		if !ok {
			errs = append(errs, field.Invalid(p.Index(i), s, unsupportedSchemeMessage(s)))
			continue
		}
		if seen[c] {
			errs = append(errs, field.Duplicate(p.Index(i), s))
		}
		seen[c] = true
	}
	return errs
}

// unsupportedSchemeMessage is v1's error text for an unknown --enable-scheme
// value; like v1 it shows the name in lower case.
func unsupportedSchemeMessage(s string) string {
	return fmt.Sprintf("scheme %s is not supported yet", strings.ToLower(s))
}

func validateGangScheduling(p *field.Path, g *configv1alpha1.GangScheduling) field.ErrorList {
	var errs field.ErrorList
	if g.SchedulerName != "" {
		errs = append(errs, dnsSubdomain(p.Child("schedulerName"), g.SchedulerName)...)
	}
	sp := p.Child("schedulerPluginsSchedulerName")
	switch {
	case g.SchedulerPluginsSchedulerName == "":
		errs = append(errs, field.Required(sp, ""))
	case strings.EqualFold(g.SchedulerPluginsSchedulerName, "volcano"):
		errs = append(errs, field.Invalid(sp, g.SchedulerPluginsSchedulerName, "must not be the Volcano scheduler name"))
	default:
		errs = append(errs, dnsSubdomain(sp, g.SchedulerPluginsSchedulerName)...)
	}
	if g.PodGroupAPI != "" && !slices.Contains(configv1alpha1.PodGroupAPIs(), g.PodGroupAPI) {
		errs = append(errs, field.NotSupported(p.Child("podGroupAPI"), g.PodGroupAPI, configv1alpha1.PodGroupAPIs()))
	}
	seen := map[configv1alpha1.PodGroupAPI]bool{}
	for i, api := range g.PodGroupAPIs {
		ip := p.Child("podGroupAPIs").Index(i)
		switch {
		case !slices.Contains(configv1alpha1.PodGroupAPIs(), api):
			errs = append(errs, field.NotSupported(ip, api, configv1alpha1.PodGroupAPIs()))
		case seen[api]:
			errs = append(errs, field.Duplicate(ip, api))
		}
		seen[api] = true
	}
	return errs
}

func validateController(p *field.Path, c *configv1alpha1.Controller) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, atLeastOne(p.Child("defaultConcurrency"), c.DefaultConcurrency)...)
	errs = append(errs, positiveDuration(p.Child("cacheSyncTimeout"), c.CacheSyncTimeout)...)
	cp := p.Child("concurrency")
	seen := map[string]string{}
	for _, k := range sortedKeys(c.Concurrency) {
		kp := cp.Key(k)
		canonical, ok := NormalizeScheme(k)
		if !ok {
			errs = append(errs, field.NotSupported(kp, k, configv1alpha1.AllSchemes()))
			continue
		}
		if prev, dup := seen[canonical]; dup {
			errs = append(errs, field.Duplicate(kp, fmt.Sprintf("%s (same kind as %s)", k, prev)))
			continue
		}
		seen[canonical] = k
		if v := c.Concurrency[k]; v < 1 {
			errs = append(errs, field.Invalid(kp, v, "must be at least 1"))
		}
	}
	return errs
}

func validateClientConnection(p *field.Path, cc *configv1alpha1.ClientConnection) field.ErrorList {
	var errs field.ErrorList
	switch qp := p.Child("qps"); {
	case cc.QPS == nil:
		errs = append(errs, field.Required(qp, ""))
	case *cc.QPS <= 0:
		errs = append(errs, field.Invalid(qp, *cc.QPS, "must be greater than 0"))
	}
	errs = append(errs, atLeastOne(p.Child("burst"), cc.Burst)...)
	return errs
}

func validateWebhook(p *field.Path, w *configv1alpha1.Webhook) field.ErrorList {
	var errs field.ErrorList
	switch pp := p.Child("port"); {
	case w.Port == nil:
		errs = append(errs, field.Required(pp, ""))
	default:
		for _, msg := range validation.IsValidPortNum(int(*w.Port)) {
			errs = append(errs, field.Invalid(pp, *w.Port, msg))
		}
	}
	if w.Host != "" && strings.ContainsAny(w.Host, " /") {
		errs = append(errs, field.Invalid(p.Child("host"), w.Host, "must be a host name or IP address"))
	}
	if w.ServiceName == "" {
		errs = append(errs, field.Required(p.Child("serviceName"), ""))
	} else {
		for _, msg := range validation.IsDNS1035Label(w.ServiceName) {
			errs = append(errs, field.Invalid(p.Child("serviceName"), w.ServiceName, msg))
		}
	}
	if w.SecretName == "" {
		errs = append(errs, field.Required(p.Child("secretName"), ""))
	} else {
		errs = append(errs, dnsSubdomain(p.Child("secretName"), w.SecretName)...)
	}
	if w.CertDir == "" {
		errs = append(errs, field.Required(p.Child("certDir"), ""))
	}
	if w.ClientURL != "" {
		if msg := clientURLProblem(w.ClientURL); msg != "" {
			errs = append(errs, field.Invalid(p.Child("clientURL"), w.ClientURL, msg))
		} else if w.CertManagement != configv1alpha1.CertManagementSelfSigned {
			errs = append(errs, field.Forbidden(p.Child("clientURL"), `only supported with certManagement "self-signed"`))
		}
	}
	switch w.CertManagement {
	case configv1alpha1.CertManagementSelfSigned, configv1alpha1.CertManagementCertManager, configv1alpha1.CertManagementNone:
	default:
		errs = append(errs, field.NotSupported(p.Child("certManagement"), w.CertManagement, []configv1alpha1.CertManagement{
			configv1alpha1.CertManagementSelfSigned, configv1alpha1.CertManagementCertManager, configv1alpha1.CertManagementNone,
		}))
	}
	return errs
}

// clientURLProblem returns why a webhook client URL is unusable, or "" if
// it is fine: it must be an https URL with a host and no user info, path
// (other than "/"), query or fragment, since the webhook paths are appended.
func clientURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "must be a URL"
	case u.Scheme != "https":
		return `must use the "https" scheme`
	case u.Hostname() == "":
		return "must have a host"
	case u.User != nil:
		return "must not have user info"
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return "must not have a path, query or fragment"
	}
	return ""
}

// validateBindAddress accepts "0" (disabled) or host:port with a port in 0-65535.
func validateBindAddress(p *field.Path, addr string) field.ErrorList {
	if addr == "0" {
		return nil
	}
	if addr == "" {
		return field.ErrorList{field.Required(p, `use "0" to disable`)}
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return field.ErrorList{field.Invalid(p, addr, `must be "0" or host:port, e.g. ":8080"`)}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return field.ErrorList{field.Invalid(p, addr, "port must be a number between 0 and 65535")}
	}
	return nil
}

// fixedPort reports whether addr is a host:port with a non-zero port, i.e.
// one that cannot be shared with another listener.
func fixedPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port != "0" && port != ""
}

func validateLeaderElection(p *field.Path, le *configv1alpha1.LeaderElection) field.ErrorList {
	var errs field.ErrorList
	rn := p.Child("resourceName")
	if le.ResourceName == "" {
		if le.LeaderElect {
			errs = append(errs, field.Required(rn, "required when leaderElect is true"))
		}
	} else {
		errs = append(errs, dnsSubdomain(rn, le.ResourceName)...)
	}
	if le.ResourceNamespace != "" {
		errs = append(errs, dnsLabel(p.Child("resourceNamespace"), le.ResourceNamespace)...)
	}
	lease := positiveDuration(p.Child("leaseDuration"), le.LeaseDuration)
	renew := positiveDuration(p.Child("renewDeadline"), le.RenewDeadline)
	retry := positiveDuration(p.Child("retryPeriod"), le.RetryPeriod)
	errs = append(errs, lease...)
	errs = append(errs, renew...)
	errs = append(errs, retry...)
	if len(lease)+len(renew)+len(retry) == 0 {
		if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
			errs = append(errs, field.Invalid(p.Child("leaseDuration"), le.LeaseDuration.Duration.String(), "must be greater than renewDeadline"))
		}
		if le.RenewDeadline.Duration <= time.Duration(leaderElectionJitterFactor*float64(le.RetryPeriod.Duration)) {
			errs = append(errs, field.Invalid(p.Child("renewDeadline"), le.RenewDeadline.Duration.String(), "must be greater than 1.2 times retryPeriod"))
		}
	}
	return errs
}

func validatePyTorchInitContainer(p *field.Path, pic *configv1alpha1.PyTorchInitContainer) field.ErrorList {
	var errs field.ErrorList
	if pic.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	errs = append(errs, atLeastOne(p.Child("maxTries"), pic.MaxTries)...)
	return errs
}

func atLeastOne(p *field.Path, v *int32) field.ErrorList {
	switch {
	case v == nil:
		return field.ErrorList{field.Required(p, "")}
	case *v < 1:
		return field.ErrorList{field.Invalid(p, *v, "must be at least 1")}
	}
	return nil
}

func positiveDuration(p *field.Path, d *metav1.Duration) field.ErrorList {
	switch {
	case d == nil:
		return field.ErrorList{field.Required(p, "")}
	case d.Duration <= 0:
		return field.ErrorList{field.Invalid(p, d.Duration.String(), "must be greater than 0")}
	}
	return nil
}

func dnsLabel(p *field.Path, v string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func dnsSubdomain(p *field.Path, v string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func sortedKeys(m map[string]int32) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
