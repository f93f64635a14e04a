package testjobs

import corev1 "k8s.io/api/core/v1"

// Env builds an env list from name/value pairs, for expected-env tables.
func Env(kv ...string) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return out
}
