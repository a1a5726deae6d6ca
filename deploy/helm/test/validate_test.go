package helmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
)

// Three checks for every rendered object, each catching what the others let through:
//
//  1. strict decoding into the k8s.io/api Go types (v0.37.0): an unknown or misspelt field, or
//     a value of the wrong JSON type, fails;
//  2. the structured schema of Kubernetes 1.37 that client-go v0.37.0 ships for server-side
//     apply (applyconfigurations/internal): the field set and scalar types of every type, as
//     the API server checks them;
//  3. the `required` lists of the Kubernetes OpenAPI v2 document that k8s.io/kube-openapi ships
//     as test data (Kubernetes v1.27; the structured schema has no notion of required). Both
//     documents come from modules pinned in go.mod: nothing is downloaded at test time.

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor the chart renders;
// strict decoding makes any other field an error.
type serviceMonitor struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// typedFor returns a new value of the Go type of a rendered kind.
func typedFor(kind string) (any, error) {
	switch kind {
	case "Deployment":
		return &appsv1.Deployment{}, nil
	case "Service":
		return &corev1.Service{}, nil
	case "ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "Secret":
		return &corev1.Secret{}, nil
	case "Pod":
		return &corev1.Pod{}, nil
	case "HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "ServiceMonitor":
		return &serviceMonitor{}, nil
	}
	return nil, fmt.Errorf("no Go type for kind %q: add it to typedFor", kind)
}

// validateObject runs the three checks on one object.
func validateObject(o object) error {
	for _, check := range []func(object) error{checkStrict, checkStructuredSchema, checkOpenAPIRequired} {
		if err := check(o); err != nil {
			return fmt.Errorf("%s %s (%s): %w", o.kind, o.name, o.source, err)
		}
	}
	return nil
}

func checkStrict(o object) error {
	v, err := typedFor(o.kind)
	if err != nil {
		return err
	}
	if err := decodeStrict(o.raw, v); err != nil {
		return fmt.Errorf("strict decode: %w", err)
	}
	return nil
}

func checkStructuredSchema(o object) error {
	if o.kind == "ServiceMonitor" {
		return nil // a CRD: the Kubernetes schema does not know it; checkStrict covers it
	}
	u := &unstructured.Unstructured{Object: o.m}
	if _, err := applyconfigurations.NewTypeConverter(scheme.Scheme).ObjectToTyped(u); err != nil {
		return fmt.Errorf("Kubernetes 1.37 schema: %w", err)
	}
	return nil
}

func checkOpenAPIRequired(o object) error {
	if o.kind == "ServiceMonitor" {
		return nil
	}
	defs, err := openAPIDefinitions()
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: o.m}
	name, err := scheme.Scheme.ToOpenAPIDefinitionName(u.GroupVersionKind())
	if err != nil {
		return err
	}
	if defs[name] == nil {
		return fmt.Errorf("the OpenAPI document has no %s", name)
	}
	var missing []string
	checkRequired(defs, defs[name], o.m, o.kind, &missing)
	if len(missing) > 0 {
		return fmt.Errorf("required by the OpenAPI schema but missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

func validateAll(t *testing.T, rel *release) {
	t.Helper()
	for _, o := range rel.objects {
		if err := validateObject(o); err != nil {
			t.Error(err)
		}
	}
}

// swaggerSchema is the part of an OpenAPI v2 schema checkRequired reads.
type swaggerSchema struct {
	Ref                  string                    `json:"$ref"`
	Required             []string                  `json:"required"`
	Properties           map[string]*swaggerSchema `json:"properties"`
	Items                *swaggerSchema            `json:"items"`
	AdditionalProperties *swaggerSchema            `json:"additionalProperties"`
}

// checkRequired walks value along schema and records every required property that is absent.
// Properties the (older) document does not know are left to the structured schema.
func checkRequired(defs map[string]*swaggerSchema, s *swaggerSchema, value any, path string, missing *[]string) {
	for s != nil && s.Ref != "" {
		s = defs[strings.TrimPrefix(s.Ref, "#/definitions/")]
	}
	if s == nil {
		return
	}
	switch v := value.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := v[r]; !ok {
				*missing = append(*missing, path+"."+r)
			}
		}
		for k, sub := range v {
			if p, ok := s.Properties[k]; ok {
				checkRequired(defs, p, sub, path+"."+k, missing)
			} else if s.AdditionalProperties != nil {
				checkRequired(defs, s.AdditionalProperties, sub, path+"."+k, missing)
			}
		}
	case []any:
		for i, sub := range v {
			checkRequired(defs, s.Items, sub, fmt.Sprintf("%s[%d]", path, i), missing)
		}
	}
}

// openAPIDefinitions reads the definitions of the Kubernetes OpenAPI v2 document in the
// module cache's copy of k8s.io/kube-openapi (the version go.mod pins), once.
var openAPIDefinitions = sync.OnceValues(func() (map[string]*swaggerSchema, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kube-openapi").Output()
	if err != nil {
		return nil, fmt.Errorf("locating k8s.io/kube-openapi: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return nil, errors.New("k8s.io/kube-openapi is not in the module cache: run go mod download")
	}
	data, err := os.ReadFile(filepath.Join(dir, "pkg", "schemaconv", "testdata", "swagger.json"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Definitions map[string]*swaggerSchema `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Definitions) < 100 {
		return nil, fmt.Errorf("the OpenAPI document has %d definitions: not the Kubernetes API", len(doc.Definitions))
	}
	return doc.Definitions, nil
})

// TestValidatorsReject proves each check bites on its own: a misspelt field and a wrong type
// fail both the strict decode and the structured schema; a missing required field fails the
// OpenAPI check.
func TestValidatorsReject(t *testing.T) {
	rel := mustInstall(t, renderOpts{})
	dep := rel.only(t, "Deployment")
	cases := []struct {
		name   string
		mutate func(m map[string]any)
		checks map[string]func(object) error
	}{
		{"unknown field", func(m map[string]any) { spec(m)["replica"] = 2 },
			map[string]func(object) error{"strict": checkStrict, "schema": checkStructuredSchema}},
		{"wrong type", func(m map[string]any) { spec(m)["replicas"] = "two" },
			map[string]func(object) error{"strict": checkStrict, "schema": checkStructuredSchema}},
		{"nested unknown", func(m map[string]any) { container(m)["imagePolicy"] = "Always" },
			map[string]func(object) error{"strict": checkStrict, "schema": checkStructuredSchema}},
		{"missing required", func(m map[string]any) { delete(spec(m), "selector") },
			map[string]func(object) error{"required": checkOpenAPIRequired}},
	}
	for _, c := range cases {
		for name, check := range c.checks {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				var m map[string]any
				if err := json.Unmarshal(dep.raw, &m); err != nil {
					t.Fatal(err)
				}
				c.mutate(m)
				raw, _ := json.Marshal(m)
				err := check(object{source: dep.source, kind: dep.kind, name: dep.name, raw: raw, m: m})
				if err == nil {
					t.Fatal("the broken Deployment passed")
				}
				t.Log(err)
			})
		}
	}
}

func spec(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

func container(m map[string]any) map[string]any {
	pod := spec(m)["template"].(map[string]any)["spec"].(map[string]any)
	return pod["containers"].([]any)[0].(map[string]any)
}
