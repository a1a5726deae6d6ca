package helmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, relative to this package.
var chartDir = filepath.Join("..", "mockgateway")

// The Kubernetes release renders target by default: the one whose schema validates them
// (client-go v0.37.0, go.mod).
const defaultKube = "v1.37.0"

// monitoringAPI is what a cluster with the Prometheus Operator's CRDs serves.
const monitoringAPI = "monitoring.coreos.com/v1"

// renderOpts are the inputs of one client-only install: what `helm install --dry-run` sends
// without a cluster, with a chosen version and capability set.
type renderOpts struct {
	values string   // YAML, as in a -f file
	kube   string   // "" is defaultKube
	apis   []string // extra API versions the cluster serves
}

// object is one rendered manifest: its source template, its JSON and a generic view of it.
type object struct {
	source string
	kind   string
	name   string
	raw    []byte
	m      map[string]any
}

// release is a rendered release: the manifest text (hooks appended, in order) and its objects.
type release struct {
	text    string
	notes   string
	objects []object
}

// install runs Helm's own install action client-only and dry-run: the values go through the
// chart's values.schema.json, the templates through the real engine, as `helm install` does.
func install(opts renderOpts) (*release, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(opts.values), &vals); err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	kube := opts.kube
	if kube == "" {
		kube = defaultKube
	}
	kv, err := chartutil.ParseKubeVersion(kube)
	if err != nil {
		return nil, err
	}
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	in := action.NewInstall(cfg)
	in.ClientOnly, in.DryRun, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = "mg", "llm"
	in.KubeVersion = kv
	in.APIVersions = chartutil.VersionSet(opts.apis)
	rel, err := in.Run(chrt, vals)
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	text.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		fmt.Fprintf(&text, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	out := &release{text: text.String(), notes: rel.Info.Notes}
	docs := releaseutil.SplitManifests(text.String())
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return manifestIndex(keys[i]) < manifestIndex(keys[j]) })
	for _, k := range keys {
		doc := docs[k]
		raw, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sourceOf(doc), err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", sourceOf(doc), err)
		}
		if m == nil {
			continue // a template that rendered to nothing but comments
		}
		kind, _ := m["kind"].(string)
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		out.objects = append(out.objects, object{source: sourceOf(doc), kind: kind, name: name, raw: raw, m: m})
	}
	return out, nil
}

// mustInstall is install for renders that must succeed.
func mustInstall(t *testing.T, opts renderOpts) *release {
	t.Helper()
	rel, err := install(opts)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	return rel
}

func manifestIndex(key string) int {
	var n int
	fmt.Sscanf(key, "manifest-%d", &n)
	return n
}

func sourceOf(doc string) string {
	for _, line := range strings.Split(doc, "\n") {
		if s, ok := strings.CutPrefix(line, "# Source: "); ok {
			return s
		}
	}
	return "(unknown template)"
}

// only returns the one object of a kind, failing unless there is exactly one.
func (r *release) only(t *testing.T, kind string) object {
	t.Helper()
	var found []object
	for _, o := range r.objects {
		if o.kind == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s, rendered %d (kinds: %v)", kind, len(found), r.kinds())
	}
	return found[0]
}

func (r *release) kinds() []string {
	var ks []string
	for _, o := range r.objects {
		ks = append(ks, o.kind)
	}
	return ks
}

func (r *release) count(kind string) int {
	n := 0
	for _, o := range r.objects {
		if o.kind == kind {
			n++
		}
	}
	return n
}

// decodeStrict decodes JSON into v, failing on any field v does not have.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the object")
	}
	return nil
}
