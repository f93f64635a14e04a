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

package v1_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const crdDir = "../../../config/crd/bases"

// fieldType is the expected OpenAPI type (and format) of one property.
type fieldType struct {
	typ    string
	format string
}

var (
	tString   = fieldType{typ: "string"}
	tDateTime = fieldType{typ: "string", format: "date-time"}
	tInt32    = fieldType{typ: "integer", format: "int32"}
	tInt64    = fieldType{typ: "integer", format: "int64"}
	tBool     = fieldType{typ: "boolean"}
	tObject   = fieldType{typ: "object"}
	tArray    = fieldType{typ: "array"}
)

// object describes the exact set of properties of an object schema.
type object map[string]fieldType

var (
	runPolicyFields = object{
		"cleanPodPolicy":          tString,
		"ttlSecondsAfterFinished": tInt32,
		"activeDeadlineSeconds":   tInt64,
		"backoffLimit":            tInt32,
		"schedulingPolicy":        tObject,
		"suspend":                 tBool,
		"managedBy":               tString,
		// Additive: whole-job restarts by rules.
		"failurePolicy": tObject,
	}
	schedulingPolicyFields = object{
		"minAvailable":           tInt32,
		"queue":                  tString,
		"minResources":           tObject,
		"priorityClass":          tString,
		"scheduleTimeoutSeconds": tInt32,
	}
	replicaSpecFields = object{
		"replicas":      tInt32,
		"template":      tObject,
		"restartPolicy": tString,
	}
	pytorchElasticFields = object{
		"minReplicas":  tInt32,
		"maxReplicas":  tInt32,
		"rdzvBackend":  tString,
		"rdzvPort":     tInt32,
		"rdzvHost":     tString,
		"rdzvId":       tString,
		"rdzvConf":     tArray,
		"standalone":   tBool,
		"nProcPerNode": tInt32,
		"maxRestarts":  tInt32,
		"metrics":      tArray,
	}
	rdzvConfFields = object{
		"key":   tString,
		"value": tString,
	}
	paddleElasticFields = object{
		"minReplicas": tInt32,
		"maxReplicas": tInt32,
		"maxRestarts": tInt32,
		"metrics":     tArray,
	}
	statusFields = object{
		"conditions":        tArray,
		"replicaStatuses":   tObject,
		"startTime":         tDateTime,
		"completionTime":    tDateTime,
		"lastReconcileTime": tDateTime,
		// Additive: the durable retry count that backoffLimit is checked against.
		"restartCount": tInt32,
		// Additive: retries already in restartCount whose pods still exist.
		"countedPods": tArray,
		// Additive: whole-job restarts made by the failure policy, and those counted toward maxRestarts.
		"restarts":                tInt32,
		"restartsCountTowardsMax": tInt32,
		// Additive: old pods a whole-job restart waits for past their grace period.
		"terminatingPods": tInt32,
	}
	conditionFields = object{
		"type":               tString,
		"status":             tString,
		"reason":             tString,
		"message":            tString,
		"lastUpdateTime":     tDateTime,
		"lastTransitionTime": tDateTime,
	}
	replicaStatusFields = object{
		"active":        tInt32,
		"succeeded":     tInt32,
		"failed":        tInt32,
		"labelSelector": tObject,
		"selector":      tString,
	}
)

type printerColumn struct {
	name, typ, jsonPath string
	priority            int32
}

var (
	stateColumn = printerColumn{name: "State", typ: "string", jsonPath: ".status.conditions[-1:].type"}
	ageColumn   = printerColumn{name: "Age", typ: "date", jsonPath: ".metadata.creationTimestamp"}
	// Additive and priority 1 (kubectl get -o wide only): the default columns stay v1's.
	restartsColumn = printerColumn{name: "Restarts", typ: "integer", jsonPath: ".status.restarts", priority: 1}
)

type scalePaths struct {
	spec, status, selector string
}

type crdCase struct {
	file         string
	kind         string
	plural       string
	singular     string
	listKind     string
	columns      []printerColumn
	scale        *scalePaths
	replicaField string // the required map of replica specs
	specFields   object
	// nested objects of spec checked exactly, by path from spec.
	nested map[string]object
}

func workerScale(x string) *scalePaths {
	return &scalePaths{
		spec:     ".spec." + x + "ReplicaSpecs.Worker.replicas",
		status:   ".status.replicaStatuses.Worker.active",
		selector: ".status.replicaStatuses.Worker.selector",
	}
}

var crdCases = []crdCase{
	{
		file: "kubeflow.org_pytorchjobs.yaml", kind: "PyTorchJob", plural: "pytorchjobs", singular: "pytorchjob", listKind: "PyTorchJobList",
		columns:      []printerColumn{stateColumn, ageColumn, restartsColumn},
		scale:        workerScale("pytorch"),
		replicaField: "pytorchReplicaSpecs",
		specFields: object{
			"runPolicy":           tObject,
			"elasticPolicy":       tObject,
			"pytorchReplicaSpecs": tObject,
			"nprocPerNode":        tString,
		},
		nested: map[string]object{
			"elasticPolicy":             pytorchElasticFields,
			"elasticPolicy.rdzvConf.[]": rdzvConfFields,
		},
	},
	{
		file: "kubeflow.org_tfjobs.yaml", kind: "TFJob", plural: "tfjobs", singular: "tfjob", listKind: "TFJobList",
		columns:      []printerColumn{stateColumn, ageColumn, restartsColumn},
		replicaField: "tfReplicaSpecs",
		specFields: object{
			"runPolicy":           tObject,
			"successPolicy":       tString,
			"tfReplicaSpecs":      tObject,
			"enableDynamicWorker": tBool,
		},
	},
	{
		file: "kubeflow.org_mpijobs.yaml", kind: "MPIJob", plural: "mpijobs", singular: "mpijob", listKind: "MPIJobList",
		columns:      []printerColumn{ageColumn, stateColumn, restartsColumn},
		replicaField: "mpiReplicaSpecs",
		specFields: object{
			"slotsPerWorker":  tInt32,
			"cleanPodPolicy":  tString,
			"mpiReplicaSpecs": tObject,
			"mainContainer":   tString,
			"runPolicy":       tObject,
		},
	},
	{
		file: "kubeflow.org_xgboostjobs.yaml", kind: "XGBoostJob", plural: "xgboostjobs", singular: "xgboostjob", listKind: "XGBoostJobList",
		columns:      []printerColumn{stateColumn, ageColumn, restartsColumn},
		replicaField: "xgbReplicaSpecs",
		specFields: object{
			"runPolicy":       tObject,
			"xgbReplicaSpecs": tObject,
		},
	},
	{
		file: "kubeflow.org_paddlejobs.yaml", kind: "PaddleJob", plural: "paddlejobs", singular: "paddlejob", listKind: "PaddleJobList",
		columns:      []printerColumn{stateColumn, ageColumn, restartsColumn},
		scale:        workerScale("paddle"),
		replicaField: "paddleReplicaSpecs",
		specFields: object{
			"runPolicy":          tObject,
			"elasticPolicy":      tObject,
			"paddleReplicaSpecs": tObject,
		},
		nested: map[string]object{
			"elasticPolicy": paddleElasticFields,
		},
	},
	{
		file: "kubeflow.org_jaxjobs.yaml", kind: "JAXJob", plural: "jaxjobs", singular: "jaxjob", listKind: "JAXJobList",
		columns:      []printerColumn{stateColumn, ageColumn, restartsColumn},
		scale:        workerScale("jax"),
		replicaField: "jaxReplicaSpecs",
		specFields: object{
			"runPolicy":       tObject,
			"jaxReplicaSpecs": tObject,
		},
	},
}

func loadCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(crdDir, file))
	if err != nil {
		t.Fatalf("reading CRD: %v", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("decoding CRD %s: %v", file, err)
	}
	return crd
}

// lookup walks a dotted path from s: a property name, "*" for
// additionalProperties or "[]" for array items.
func lookup(t *testing.T, s *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	if path == "" {
		return s
	}
	cur := s
	for _, seg := range strings.Split(path, ".") {
		switch seg {
		case "*":
			if cur.AdditionalProperties == nil || cur.AdditionalProperties.Schema == nil {
				t.Fatalf("%s: no additionalProperties schema", path)
			}
			cur = cur.AdditionalProperties.Schema
		case "[]":
			if cur.Items == nil || cur.Items.Schema == nil {
				t.Fatalf("%s: no items schema", path)
			}
			cur = cur.Items.Schema
		default:
			p, ok := cur.Properties[seg]
			if !ok {
				t.Fatalf("%s: property %q missing (have %v)", path, seg, keys(cur.Properties))
			}
			cur = &p
		}
	}
	return cur
}

func keys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkObject verifies that the schema at path is an object with exactly the
// expected properties, each with the expected type/format and a description.
func checkObject(t *testing.T, root *apiextensionsv1.JSONSchemaProps, path string, want object) {
	t.Helper()
	s := lookup(t, root, path)
	if s.Type != "object" {
		t.Errorf("%s: type %q, want object", path, s.Type)
	}
	wantKeys := make([]string, 0, len(want))
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	sort.Strings(wantKeys)
	if diff := cmp.Diff(wantKeys, keys(s.Properties)); diff != "" {
		t.Errorf("%s: property names differ (-want +got):\n%s", path, diff)
	}
	for name, ft := range want {
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		if p.Type != ft.typ || p.Format != ft.format {
			t.Errorf("%s.%s: type %q format %q, want type %q format %q", path, name, p.Type, p.Format, ft.typ, ft.format)
		}
		if strings.TrimSpace(p.Description) == "" {
			t.Errorf("%s.%s: missing description", path, name)
		}
	}
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

func checkEnumAllows(t *testing.T, s *apiextensionsv1.JSONSchemaProps, path string, values ...string) {
	t.Helper()
	if len(s.Enum) == 0 {
		return // no enum: every string is accepted, as in v1
	}
	var got []string
	for _, e := range s.Enum {
		var v string
		if err := yaml.Unmarshal(e.Raw, &v); err != nil {
			t.Fatalf("%s: enum value %s: %v", path, e.Raw, err)
		}
		got = append(got, v)
	}
	for _, v := range values {
		if !slices.Contains(got, v) {
			t.Errorf("%s: enum %q rejects %q, which v1 accepts", path, got, v)
		}
	}
}

func walkNoPreserveUnknown(t *testing.T, s *apiextensionsv1.JSONSchemaProps, path string) {
	t.Helper()
	if s == nil {
		return
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		t.Errorf("%s: x-kubernetes-preserve-unknown-fields is set", path)
	}
	for k, p := range s.Properties {
		walkNoPreserveUnknown(t, &p, path+"."+k)
	}
	if s.AdditionalProperties != nil {
		walkNoPreserveUnknown(t, s.AdditionalProperties.Schema, path+".*")
	}
	if s.Items != nil {
		walkNoPreserveUnknown(t, s.Items.Schema, path+".[]")
	}
}

func TestCRDSchemas(t *testing.T) {
	for _, tc := range crdCases {
		t.Run(tc.kind, func(t *testing.T) {
			crd := loadCRD(t, tc.file)

			// Names and scope.
			if crd.Name != tc.plural+".kubeflow.org" {
				t.Errorf("CRD name %q", crd.Name)
			}
			if crd.Spec.Group != "kubeflow.org" {
				t.Errorf("group %q", crd.Spec.Group)
			}
			wantNames := apiextensionsv1.CustomResourceDefinitionNames{
				Plural: tc.plural, Singular: tc.singular, Kind: tc.kind, ListKind: tc.listKind,
			}
			if diff := cmp.Diff(wantNames, crd.Spec.Names); diff != "" {
				t.Errorf("names (-want +got), shortNames and categories must be empty:\n%s", diff)
			}
			if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("scope %q", crd.Spec.Scope)
			}

			// Versions.
			if len(crd.Spec.Versions) != 1 {
				t.Fatalf("%d versions, want 1", len(crd.Spec.Versions))
			}
			v := crd.Spec.Versions[0]
			if v.Name != "v1" || !v.Served || !v.Storage {
				t.Errorf("version %q served=%v storage=%v", v.Name, v.Served, v.Storage)
			}

			// Subresources.
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Fatalf("status subresource missing")
			}
			if tc.scale == nil {
				if v.Subresources.Scale != nil {
					t.Errorf("unexpected scale subresource %+v", v.Subresources.Scale)
				}
			} else {
				sc := v.Subresources.Scale
				if sc == nil {
					t.Fatalf("scale subresource missing")
				}
				got := scalePaths{spec: sc.SpecReplicasPath, status: sc.StatusReplicasPath}
				if sc.LabelSelectorPath != nil {
					got.selector = *sc.LabelSelectorPath
				}
				if got != *tc.scale {
					t.Errorf("scale paths %+v, want %+v", got, *tc.scale)
				}
			}

			// Printer columns.
			var cols []printerColumn
			for _, c := range v.AdditionalPrinterColumns {
				cols = append(cols, printerColumn{name: c.Name, typ: c.Type, jsonPath: c.JSONPath, priority: c.Priority})
			}
			if diff := cmp.Diff(tc.columns, cols, cmp.AllowUnexported(printerColumn{})); diff != "" {
				t.Errorf("printer columns (-want +got):\n%s", diff)
			}

			// Schema.
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Fatalf("no schema")
			}
			root := v.Schema.OpenAPIV3Schema
			walkNoPreserveUnknown(t, root, "")
			if len(root.Required) != 0 {
				t.Errorf("top-level required %v, want none", root.Required)
			}
			for _, p := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
				lookup(t, root, p)
			}

			// spec
			checkObject(t, root, "spec", tc.specFields)
			spec := lookup(t, root, "spec")
			if diff := cmp.Diff([]string{tc.replicaField}, spec.Required); diff != "" {
				t.Errorf("spec.required (-want +got):\n%s", diff)
			}
			for path, want := range tc.nested {
				checkObject(t, root, join("spec", path), want)
			}

			// Replica specs: a map of ReplicaSpec with the full PodTemplateSpec.
			rsPath := join("spec", tc.replicaField)
			rsMap := lookup(t, root, rsPath)
			if rsMap.Type != "object" || rsMap.AdditionalProperties == nil {
				t.Errorf("%s must be a map", rsPath)
			}
			checkObject(t, root, rsPath+".*", replicaSpecFields)
			checkEnumAllows(t, lookup(t, root, rsPath+".*.restartPolicy"), "restartPolicy", "", "Always", "OnFailure", "Never", "ExitCode")
			tmpl := lookup(t, root, rsPath+".*.template")
			if _, ok := tmpl.Properties["metadata"]; !ok {
				t.Errorf("template.metadata missing")
			}
			podSpec := lookup(t, root, rsPath+".*.template.spec")
			if !slices.Contains(podSpec.Required, "containers") {
				t.Errorf("template.spec must embed the PodSpec schema (containers required), got required %v", podSpec.Required)
			}
			lookup(t, root, rsPath+".*.template.spec.containers.[].ports.[].containerPort")

			// runPolicy and schedulingPolicy.
			checkObject(t, root, "spec.runPolicy", runPolicyFields)
			if slices.Contains(spec.Required, "runPolicy") {
				t.Errorf("spec.runPolicy must be optional")
			}
			if rp := lookup(t, root, "spec.runPolicy"); len(rp.Required) != 0 {
				t.Errorf("runPolicy.required %v, want none", rp.Required)
			}
			checkEnumAllows(t, lookup(t, root, "spec.runPolicy.cleanPodPolicy"), "cleanPodPolicy", "", "All", "Running", "None")
			suspend := lookup(t, root, "spec.runPolicy.suspend")
			if suspend.Default == nil || string(suspend.Default.Raw) != "false" {
				t.Errorf("runPolicy.suspend default %v, want false", suspend.Default)
			}
			checkObject(t, root, "spec.runPolicy.schedulingPolicy", schedulingPolicyFields)
			queue := lookup(t, root, "spec.runPolicy.schedulingPolicy.queue")
			wantRules := apiextensionsv1.ValidationRules{{
				Rule:    "self == oldSelf",
				Message: "spec.runPolicy.schedulingPolicy.queue is immutable",
			}}
			if diff := cmp.Diff(wantRules, queue.XValidations); diff != "" {
				t.Errorf("queue CEL rules (-want +got):\n%s", diff)
			}
			minRes := lookup(t, root, "spec.runPolicy.schedulingPolicy.minResources.*")
			if !minRes.XIntOrString || len(minRes.AnyOf) != 2 || minRes.Pattern == "" {
				t.Errorf("minResources values must be int-or-string quantities: %+v", minRes)
			}

			// Per-kind details.
			switch tc.kind {
			case "PyTorchJob":
				checkEnumAllows(t, lookup(t, root, "spec.elasticPolicy.rdzvBackend"), "rdzvBackend", "c10d", "etcd", "etcd-v2")
				lookup(t, root, "spec.elasticPolicy.metrics.[].resource.target.averageUtilization")
			case "PaddleJob":
				lookup(t, root, "spec.elasticPolicy.metrics.[].resource.target.averageUtilization")
			case "TFJob":
				checkEnumAllows(t, lookup(t, root, "spec.successPolicy"), "successPolicy", "", "AllWorkers")
			case "MPIJob":
				checkEnumAllows(t, lookup(t, root, "spec.cleanPodPolicy"), "cleanPodPolicy", "", "All", "Running", "None")
			}

			// status
			checkObject(t, root, "status", statusFields)
			if st := lookup(t, root, "status"); len(st.Required) != 0 {
				t.Errorf("status.required %v, want none", st.Required)
			}
			checkObject(t, root, "status.conditions.[]", conditionFields)
			cond := lookup(t, root, "status.conditions.[]")
			gotReq := slices.Clone(cond.Required)
			sort.Strings(gotReq)
			if diff := cmp.Diff([]string{"status", "type"}, gotReq); diff != "" {
				t.Errorf("conditions[].required (-want +got):\n%s", diff)
			}
			checkObject(t, root, "status.replicaStatuses.*", replicaStatusFields)
			lookup(t, root, "status.replicaStatuses.*.labelSelector.matchLabels")
		})
	}
}

// TestCRDFilesComplete guards against a CRD being dropped from (or added to)
// config/crd without the test knowing.
func TestCRDFilesComplete(t *testing.T) {
	entries, err := os.ReadDir(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			got = append(got, e.Name())
		}
	}
	var want []string
	for _, tc := range crdCases {
		want = append(want, tc.file)
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRD files (-want +got):\n%s", diff)
	}
}
