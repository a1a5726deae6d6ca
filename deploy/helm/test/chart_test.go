package helmtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestLint runs helm lint (with the chart's schema, in strict mode) on the default values.
func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(defaultKube)
	if err != nil {
		t.Fatal(err)
	}
	res := lint.AllWithKubeVersion(chartDir, map[string]any{}, "llm", kv)
	for _, m := range res.Messages {
		if m.Severity > support.InfoSev {
			t.Errorf("lint: %s", m)
		} else {
			t.Logf("lint: %s", m)
		}
	}
}

// The matrix: each case renders, every object passes validateObject, the pod specs pass
// checkPodSpec, and check asserts what the case is about.
func TestRenderMatrix(t *testing.T) {
	cases := []struct {
		name  string
		opts  renderOpts
		check func(t *testing.T, r *release)
	}{
		{"defaults", renderOpts{}, func(t *testing.T, r *release) {
			wantKinds(t, r, "ServiceAccount", "Service", "Deployment", "Pod")
			d := deployment(t, r)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
				t.Errorf("replicas %v, want 1", d.Spec.Replicas)
			}
			for _, want := range []string{"kubectl --namespace llm port-forward service/mg-mockgateway 8080:8080", "http://127.0.0.1:8080/", "helm test mg"} {
				if !strings.Contains(r.notes, want) {
					t.Errorf("NOTES.txt lacks %q:\n%s", want, r.notes)
				}
			}
		}},
		{"servicemonitor auto, cluster has the CRD", renderOpts{apis: []string{monitoringAPI}}, func(t *testing.T, r *release) {
			sm := r.only(t, "ServiceMonitor")
			var v serviceMonitor
			_ = decodeStrict(sm.raw, &v)
			if len(v.Spec.Endpoints) != 1 || v.Spec.Endpoints[0].Port != "http" || v.Spec.Endpoints[0].Path != "/metrics" {
				t.Errorf("endpoints %+v", v.Spec.Endpoints)
			}
		}},
		{"servicemonitor auto, no CRD", renderOpts{}, func(t *testing.T, r *release) {
			if n := r.count("ServiceMonitor"); n != 0 {
				t.Errorf("%d ServiceMonitors without the CRD", n)
			}
		}},
		{"servicemonitor forced on", renderOpts{values: "serviceMonitor: {enabled: true}"}, func(t *testing.T, r *release) {
			r.only(t, "ServiceMonitor")
		}},
		{"servicemonitor forced off", renderOpts{values: "serviceMonitor: {enabled: false}", apis: []string{monitoringAPI}}, func(t *testing.T, r *release) {
			if n := r.count("ServiceMonitor"); n != 0 {
				t.Errorf("%d ServiceMonitors although disabled", n)
			}
		}},
		{"hpa and pdb", renderOpts{values: "autoscaling: {enabled: true, minReplicas: 3}\npodDisruptionBudget: {enabled: true}"}, func(t *testing.T, r *release) {
			r.only(t, "HorizontalPodAutoscaler")
			r.only(t, "PodDisruptionBudget")
			if d := deployment(t, r); d.Spec.Replicas != nil {
				t.Errorf("replicas %d set although the HPA owns the count", *d.Spec.Replicas)
			}
		}},
		{"pdb maxUnavailable percent", renderOpts{values: "podDisruptionBudget: {enabled: true, minAvailable: null, maxUnavailable: 50%}"}, func(t *testing.T, r *release) {
			if !strings.Contains(string(r.only(t, "PodDisruptionBudget").raw), `"maxUnavailable":"50%"`) {
				t.Error("maxUnavailable not rendered as 50%")
			}
		}},
		{"fixtures and catalog", renderOpts{values: fixturesValues("v1")}, func(t *testing.T, r *release) {
			if n := r.count("ConfigMap"); n != 2 {
				t.Fatalf("%d ConfigMaps, want catalog and fixtures", n)
			}
			d := deployment(t, r)
			args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
			for _, want := range []string{"--catalog=/etc/mockgateway/catalog/catalog.yaml", "--fixtures=/etc/mockgateway/fixtures", "--fixtures-reload=200ms"} {
				if !strings.Contains(args, want) {
					t.Errorf("args %q lack %q", args, want)
				}
			}
			ann := d.Spec.Template.Annotations
			if ann["checksum/catalog"] == "" {
				t.Error("no checksum/catalog: a catalog change would not restart the pods that read it once")
			}
			for k := range ann {
				if strings.Contains(k, "fixture") {
					t.Errorf("annotation %s: fixtures reload live, a checksum would roll the pods", k)
				}
			}
		}},
		{"otlp", renderOpts{values: "otel: {endpoint: 'http://otel-collector.observability:4318', protocol: grpc, resourceAttributes: {deployment.environment: ci}, headersSecret: {name: otlp, key: headers}}"}, func(t *testing.T, r *release) {
			env := envOf(deployment(t, r))
			for k, want := range map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4318",
				"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_SERVICE_NAME":           "mockgateway",
				"OTEL_RESOURCE_ATTRIBUTES":    "k8s.pod.name=$(K8S_POD_NAME),k8s.namespace.name=$(K8S_NAMESPACE_NAME),k8s.node.name=$(K8S_NODE_NAME),deployment.environment=ci",
			} {
				if env[k].Value != want {
					t.Errorf("%s = %q, want %q", k, env[k].Value, want)
				}
			}
			if h := env["OTEL_EXPORTER_OTLP_HEADERS"].ValueFrom; h == nil || h.SecretKeyRef == nil || h.SecretKeyRef.Name != "otlp" {
				t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not from Secret otlp: %+v", h)
			}
		}},
		{"key from an existing secret", renderOpts{values: "apiKey: {existingSecret: gw-key, existingSecretKey: token}"}, func(t *testing.T, r *release) {
			if n := r.count("Secret"); n != 0 {
				t.Errorf("%d Secrets rendered for an existing one", n)
			}
			ref := envOf(deployment(t, r))["MOCKGATEWAY_API_KEY"].ValueFrom
			if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "gw-key" || ref.SecretKeyRef.Key != "token" {
				t.Errorf("MOCKGATEWAY_API_KEY from %+v, want gw-key/token", ref)
			}
		}},
		{"shared state store from a secret", renderOpts{values: "stateStore: {url: {secretName: gw-redis, secretKey: redis-url}}"}, func(t *testing.T, r *release) {
			if n := r.count("Secret"); n != 0 {
				t.Errorf("%d Secrets rendered: the chart names the store's, it makes none", n)
			}
			ref := envOf(deployment(t, r))["MOCKGATEWAY_STATE_STORE"].ValueFrom
			if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "gw-redis" || ref.SecretKeyRef.Key != "redis-url" {
				t.Errorf("MOCKGATEWAY_STATE_STORE from %+v, want gw-redis/redis-url", ref)
			}
			for _, k := range r.kinds() {
				if strings.Contains(strings.ToLower(k), "statefulset") {
					t.Errorf("the chart rendered a %s: it installs no Redis", k)
				}
			}
		}},
		{"no shared state store by default", renderOpts{}, func(t *testing.T, r *release) {
			if _, ok := envOf(deployment(t, r))["MOCKGATEWAY_STATE_STORE"]; ok {
				t.Error("MOCKGATEWAY_STATE_STORE set without stateStore.url")
			}
		}},
		{"seal key from a secret", renderOpts{values: "replicaCount: 3\nsealKey: {secretName: gw-seal, secretKey: key}"}, func(t *testing.T, r *release) {
			if n := r.count("Secret"); n != 0 {
				t.Errorf("%d Secrets rendered: the chart names the seal key's, it makes none", n)
			}
			c := deployment(t, r).Spec.Template.Spec.Containers[0]
			ref := envOf(deployment(t, r))["MOCKGATEWAY_SEAL_KEY"].ValueFrom
			if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "gw-seal" || ref.SecretKeyRef.Key != "key" {
				t.Errorf("MOCKGATEWAY_SEAL_KEY from %+v, want gw-seal/key", ref)
			}
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--seal-key") {
					t.Errorf("arg %s: the key would show in the pod spec", a)
				}
			}
			for _, o := range r.objects {
				if o.kind == "ConfigMap" && strings.Contains(strings.ToLower(string(o.raw)), "seal") {
					t.Errorf("ConfigMap %s mentions the seal key", o.name)
				}
			}
			if strings.Contains(r.notes, "seal") {
				t.Errorf("NOTES warn about the seal key although it is set:\n%s", r.notes)
			}
		}},
		{"no seal key by default", renderOpts{}, func(t *testing.T, r *release) {
			if _, ok := envOf(deployment(t, r))["MOCKGATEWAY_SEAL_KEY"]; ok {
				t.Error("MOCKGATEWAY_SEAL_KEY set without sealKey")
			}
		}},
		{"replicas without a seal key: NOTES say so", renderOpts{values: "replicaCount: 3\nstateStore: {url: {secretName: gw-redis}}"}, func(t *testing.T, r *release) {
			if !strings.Contains(r.notes, "sealKey") {
				t.Errorf("NOTES do not name sealKey for 3 replicas without one:\n%s", r.notes)
			}
		}},
		{"key in a created secret", renderOpts{values: "apiKey: {value: s3cret}"}, func(t *testing.T, r *release) {
			var s corev1.Secret
			_ = decodeStrict(r.only(t, "Secret").raw, &s)
			if string(s.Data["api-key"]) != "s3cret" {
				t.Errorf("secret data %q", s.Data)
			}
			if deployment(t, r).Spec.Template.Annotations["checksum/api-key"] == "" {
				t.Error("no checksum/api-key: a new key would not reach running pods")
			}
		}},
		{"log file, every flag", renderOpts{values: "logFile: {enabled: true}\n" + everyFlag}, func(t *testing.T, r *release) {
			args := deployment(t, r).Spec.Template.Spec.Containers[0].Args
			if !contains(args, "--log-file=/logs/mockgateway.log") || !contains(args, "--log-stderr=true") || !contains(args, "--max-fixture-bytes=67108864") {
				t.Errorf("args %q", args)
			}
		}},
		{"GOMEMLIMIT from a Gi limit", renderOpts{values: "resources: {limits: {memory: 1Gi}}"}, func(t *testing.T, r *release) {
			if v := envOf(deployment(t, r))["GOMEMLIMIT"].Value; v != "921MiB" {
				t.Errorf("GOMEMLIMIT %q, want 90%% of 1Gi, 921MiB", v)
			}
		}},
		{"GOMEMLIMIT from a limit in bytes", renderOpts{values: "resources: {limits: {memory: 536870912}}"}, func(t *testing.T, r *release) {
			if ref := envOf(deployment(t, r))["GOMEMLIMIT"].ValueFrom; ref == nil || ref.ResourceFieldRef == nil {
				t.Errorf("GOMEMLIMIT not from the downward API: %+v", ref)
			}
		}},
		{"kubernetes 1.29: no preStop sleep", renderOpts{kube: "v1.29.4"}, func(t *testing.T, r *release) {
			d := deployment(t, r)
			if d.Spec.Template.Spec.Containers[0].Lifecycle != nil {
				t.Error("preStop sleep rendered for a cluster without the sleep action")
			}
			if g := *d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != 15 {
				t.Errorf("grace %d, want drain 5 + extra 10", g)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustInstall(t, c.opts)
			validateAll(t, r)
			checkPods(t, r)
			c.check(t, r)
		})
	}
}

// TestValuesSchemaRejects: unknown and mistyped values fail the install itself.
func TestValuesSchemaRejects(t *testing.T) {
	for name, values := range map[string]string{
		"unknown top-level key":     "replicas: 2",
		"unknown nested key":        "image: {repo: x}",
		"unknown flag":              "config: {logLevl: debug}",
		"mistyped count":            "replicaCount: two",
		"mistyped port":             "service: {port: '8080'}",
		"bad enum":                  "serviceMonitor: {enabled: yes-please}",
		"bad duration":              "config: {writeTimeout: 30}",
		"fixture without yaml ext":  "fixtures: {hello.txt: 'fixtures: []'}",
		"resources unknown key":     "resources: {limits: {gpu: 1}}",
		"state store URL in values": "stateStore: {url: 'redis://:pw@redis:6379/0'}",
		"seal key in values":        "sealKey: 0123456789abcdef0123",
		"seal key value field":      "sealKey: {value: 0123456789abcdef0123}",
		"seal key as a flag":        "config: {sealKey: 0123456789abcdef0123}",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := install(renderOpts{values: values})
			if err == nil {
				t.Fatalf("values %q were accepted", values)
			}
			if !strings.Contains(err.Error(), "schema") {
				t.Errorf("failed, but not by the schema: %v", err)
			}
		})
	}
}

// TestGoldenDefault compares the render of the defaults with testdata/golden/default.yaml;
// MOCKGATEWAY_UPDATE_GOLDEN=1 rewrites it (review the diff).
func TestGoldenDefault(t *testing.T) {
	got := mustInstall(t, renderOpts{}).text
	path := filepath.Join("testdata", "golden", "default.yaml")
	if os.Getenv("MOCKGATEWAY_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (MOCKGATEWAY_UPDATE_GOLDEN=1 writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the default render differs from %s; if intended, rerun with MOCKGATEWAY_UPDATE_GOLDEN=1 and review the diff.\n%s", path, firstDiff(string(want), got))
	}
}

// checkPods holds every pod the chart runs (the service and the helm test hook) to the same
// bar: non-root as the image's uid, read-only, no privilege, no token, no subPath mounts.
func checkPods(t *testing.T, r *release) {
	t.Helper()
	for _, o := range r.objects {
		var ps *corev1.PodSpec
		switch o.kind {
		case "Deployment":
			d := deployment(t, r)
			ps = &d.Spec.Template.Spec
			checkShutdown(t, d)
		case "Pod":
			var p corev1.Pod
			if err := decodeStrict(o.raw, &p); err != nil {
				t.Fatal(err)
			}
			ps = &p.Spec
		default:
			continue
		}
		if !ptr.Deref(ps.SecurityContext.RunAsNonRoot, false) || ptr.Deref(ps.AutomountServiceAccountToken, true) {
			t.Errorf("%s: pod runs as root or mounts a token", o.source)
		}
		for _, c := range ps.Containers {
			sc := c.SecurityContext
			ok := sc != nil && ptr.Deref(sc.RunAsNonRoot, false) && ptr.Deref(sc.RunAsUser, 0) == 65532 &&
				ptr.Deref(sc.ReadOnlyRootFilesystem, false) && !ptr.Deref(sc.AllowPrivilegeEscalation, true) &&
				sc.Capabilities != nil && len(sc.Capabilities.Drop) == 1 && sc.Capabilities.Drop[0] == "ALL" &&
				sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
			if !ok {
				t.Errorf("%s: container %s security context %+v", o.source, c.Name, sc)
			}
			if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
				t.Errorf("%s: container %s without a memory limit or a CPU request", o.source, c.Name)
			}
			for _, m := range c.VolumeMounts {
				if m.SubPath != "" {
					t.Errorf("%s: subPath mount %s never sees ConfigMap updates", o.source, m.Name)
				}
			}
		}
	}
}

// checkShutdown: the probes ask /health on the named port, and the grace period covers the
// preStop sleep plus the binary's drain with room for the rest.
func checkShutdown(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET /health on port http", name, p)
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports %+v", c.Ports)
	}
	var preStop, drain int64
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = c.Lifecycle.PreStop.Sleep.Seconds
	}
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--drain-timeout="); ok {
			var err error
			if drain, err = parseSeconds(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	grace := ptr.Deref(d.Spec.Template.Spec.TerminationGracePeriodSeconds, 30)
	if grace < preStop+drain+5 {
		t.Errorf("terminationGracePeriodSeconds %d < preStop %d + drain %d + 5", grace, preStop, drain)
	}
	// A draining pod answers 503 on /health: liveness must not kill it before the grace ends.
	if l := c.LivenessProbe; int64(l.PeriodSeconds*l.FailureThreshold) <= grace {
		t.Errorf("liveness gives up after %d s, within the %d s grace period", l.PeriodSeconds*l.FailureThreshold, grace)
	}
}

func deployment(t *testing.T, r *release) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := decodeStrict(r.only(t, "Deployment").raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func envOf(d *appsv1.Deployment) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

func wantKinds(t *testing.T, r *release, kinds ...string) {
	t.Helper()
	if got := strings.Join(r.kinds(), ","); got != strings.Join(kinds, ",") {
		t.Errorf("kinds %s, want %s", got, strings.Join(kinds, ","))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return ""
}

// TestPDBNeedsExactlyOne: both bounds, or neither, is refused with a message that says so.
func TestPDBNeedsExactlyOne(t *testing.T) {
	for _, values := range []string{
		"podDisruptionBudget: {enabled: true, minAvailable: 1, maxUnavailable: 1}",
		"podDisruptionBudget: {enabled: true, minAvailable: null}",
	} {
		if _, err := install(renderOpts{values: values}); err == nil || !strings.Contains(err.Error(), "exactly one") {
			t.Errorf("%s: %v", values, err)
		}
	}
}
