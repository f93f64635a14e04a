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

package chartsync

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"

	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/kinds"
)

// RBACPackages are the packages whose markers make config/rbac/role.yaml
// (the Makefile's RBAC_PACKAGES: the Kueue integration has a role of its
// own).
var RBACPackages = []string{"./controllers/...", "./internal/operator/...", "./internal/serving/cert/..."}

const kueuePackage = "github.com/seed-d8a409e9/training-operator/controllers/kueue"

// grant is one (apiGroup, resource, verb, resourceName) a rule allows;
// name is empty for a rule without resourceNames.
type grant struct{ group, resource, verb, name string }

func grantsOf(rules []rbacv1.PolicyRule) map[grant]bool {
	out := map[grant]bool{}
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out[grant{g, res, v, n}] = true
					}
				}
			}
		}
	}
	return out
}

// rulesOf is the inverse of grantsOf, in a stable order: one rule per
// apiGroup, resourceName and set of verbs.
func rulesOf(gs map[grant]bool) []rbacv1.PolicyRule {
	type resKey struct{ group, resource, name string }
	verbs := map[resKey][]string{}
	for g := range gs {
		k := resKey{g.group, g.resource, g.name}
		verbs[k] = append(verbs[k], g.verb)
	}
	type ruleKey struct{ group, name, verbs string }
	resources := map[ruleKey][]string{}
	for k, vs := range verbs {
		slices.Sort(vs)
		rk := ruleKey{k.group, k.name, strings.Join(vs, ";")}
		resources[rk] = append(resources[rk], k.resource)
	}
	out := make([]rbacv1.PolicyRule, 0, len(resources))
	for _, rk := range slices.SortedFunc(maps.Keys(resources), func(a, b ruleKey) int {
		return strings.Compare(a.group+"\x00"+a.name+"\x00"+a.verbs, b.group+"\x00"+b.name+"\x00"+b.verbs)
	}) {
		res := resources[rk]
		slices.Sort(res)
		r := rbacv1.PolicyRule{APIGroups: []string{rk.group}, Resources: res, Verbs: strings.Split(rk.verbs, ";")}
		if rk.name != "" {
			r.ResourceNames = []string{rk.name}
		}
		out = append(out, r)
	}
	return out
}

// SplitRules are the operator's rules split by what needs them.
type SplitRules struct {
	// Common are the rules every install needs.
	Common []rbacv1.PolicyRule
	// Kinds are each kind's own rules, by scheme name.
	Kinds map[string][]rbacv1.PolicyRule
	// GangBackends are each gang backend's own rules (on the resources it
	// creates, gang.Resources), by its PodGroup API.
	GangBackends map[string][]rbacv1.PolicyRule
}

// KindRules splits the operator's rules into those every install needs,
// those of each kind alone (keyed by scheme name) and those of each gang
// backend: a grant only the markers of the kind's adapter package
// (kinds.Kind.Package) declare is the kind's; a grant on a resource a gang
// backend creates is the backend's; one any other package declares too is
// common. all are the rules of config/rbac/role.yaml, which must be the
// union of the packages'.
func KindRules(root string, all []rbacv1.PolicyRule) (SplitRules, error) {
	common, perKind, err := kindRules(root, all)
	if err != nil {
		return SplitRules{}, err
	}
	out := SplitRules{Kinds: perKind, GangBackends: map[string][]rbacv1.PolicyRule{}}
	rest := grantsOf(common)
	for api, resources := range gang.Resources() {
		own := map[grant]bool{}
		for g := range rest {
			if slices.Contains(resources, schema.GroupResource{Group: g.group, Resource: g.resource}) {
				own[g] = true
				delete(rest, g)
			}
		}
		if len(own) == 0 {
			return SplitRules{}, fmt.Errorf("gang backend %s: no RBAC marker grants its resources %v", api, resources)
		}
		out.GangBackends[string(api)] = rulesOf(own)
	}
	out.Common = rulesOf(rest)
	return out, nil
}

func kindRules(root string, all []rbacv1.PolicyRule) (common []rbacv1.PolicyRule, perKind map[string][]rbacv1.PolicyRule, err error) {
	kindOf := map[string]string{}
	for _, k := range kinds.All() {
		pkg, err := k.Package()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k.Info.Kind, err)
		}
		kindOf[pkg] = k.Info.Kind
	}
	roots, err := loader.LoadRootsWithConfig(&packages.Config{Dir: root}, RBACPackages...)
	if err != nil {
		return nil, nil, err
	}
	reg := &markers.Registry{}
	if err := (rbac.Generator{}).RegisterMarkers(reg); err != nil {
		return nil, nil, err
	}
	collector := &markers.Collector{Registry: reg}
	shared := map[grant]bool{}
	byKind := map[string]map[grant]bool{}
	union := map[grant]bool{}
	for _, pkg := range roots {
		if pkg.PkgPath == kueuePackage {
			continue
		}
		objs, err := rbac.GenerateRoles(&genall.GenerationContext{Collector: collector, Roots: []*loader.Package{pkg}}, RoleName)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pkg.PkgPath, err)
		}
		if len(pkg.Errors) > 0 {
			return nil, nil, fmt.Errorf("%s: %v", pkg.PkgPath, pkg.Errors[0])
		}
		gs := map[grant]bool{}
		for _, o := range objs {
			switch role := o.(type) {
			case rbacv1.ClusterRole:
				maps.Copy(gs, grantsOf(role.Rules))
			default:
				return nil, nil, fmt.Errorf("%s: markers generate a %T; only ClusterRole rules are supported", pkg.PkgPath, o)
			}
		}
		maps.Copy(union, gs)
		if kind, ok := kindOf[pkg.PkgPath]; ok {
			byKind[kind] = gs
		} else {
			maps.Copy(shared, gs)
		}
	}
	if want := grantsOf(all); !maps.Equal(union, want) {
		return nil, nil, fmt.Errorf("%s is not the union of the packages' RBAC markers; run make manifests", RoleSource)
	}
	perKind = map[string][]rbacv1.PolicyRule{}
	for _, k := range kinds.Names() {
		own := map[grant]bool{}
		for g := range byKind[k] {
			if !shared[g] {
				own[g] = true
			}
		}
		perKind[k] = rulesOf(own)
	}
	return rulesOf(shared), perKind, nil
}
