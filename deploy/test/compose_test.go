package test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeEnv is the environment docker-compose runs with: the developer's, less anything that
// would change the file's interpolated defaults.
func composeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MOCKGATEWAY_") || strings.HasPrefix(kv, "COMPOSE_") || strings.HasPrefix(kv, "DOCKER_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// TestComposeFileValidates is `docker-compose -f docker-compose.yml config -q` with Debian's
// compose v1, which validates the file against the Compose Specification without an engine.
func TestComposeFileValidates(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	requireTool(t, "docker-compose")
	for _, args := range [][]string{
		{"-f", "docker-compose.yml", "config", "-q"},
		{"-f", "docker-compose.yml", "--profile", "audit", "config", "-q"},
	} {
		if out, err := run(t, repoRoot, composeEnv(), "docker-compose", args...); err != nil {
			t.Errorf("docker-compose %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// composeService is the part of a (normalized) compose service the tests read.
type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string            `yaml:"context"`
		Dockerfile string            `yaml:"dockerfile"`
		Args       map[string]string `yaml:"args"`
	} `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Profiles    []string          `yaml:"profiles"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// normalizedCompose is the file as docker-compose resolves it (anchors merged, ${VAR:-default}
// interpolated, short syntax expanded), every profile included.
func normalizedCompose(t *testing.T) map[string]composeService {
	t.Helper()
	requireTool(t, "docker-compose")
	out, err := run(t, repoRoot, composeEnv(), "docker-compose", "-f", "docker-compose.yml", "--profile", "audit", "config")
	if err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, out)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("docker-compose config output: %v", err)
	}
	return f.Services
}

func TestComposeStack(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	services := normalizedCompose(t)
	for _, name := range []string{"mockgateway", "traffic", "audit", "prometheus", "grafana", "jaeger"} {
		if _, ok := services[name]; !ok {
			t.Fatalf("no %s service", name)
		}
	}

	pinned := regexp.MustCompile(`^[a-z0-9./-]+:v?\d+\.\d+\.\d+$`)
	for name, s := range services {
		if !pinned.MatchString(s.Image) {
			t.Errorf("%s: image %q is not pinned to a version tag", name, s.Image)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s: port %q is published beyond 127.0.0.1", name, p)
			}
		}
		for _, v := range s.Volumes {
			src := strings.SplitN(v, ":", 2)[0]
			if filepath.IsAbs(src) {
				if _, err := os.Stat(src); err != nil {
					t.Errorf("%s: mounts %s, which does not exist", name, src)
				}
			}
		}
		for dep, d := range s.DependsOn {
			if d.Condition != "service_healthy" {
				t.Errorf("%s depends on %s with %q; want service_healthy so start-up settles in order", name, dep, d.Condition)
			}
			if hc := services[dep].Healthcheck; hc == nil || len(hc.Test) == 0 || hc.Test[0] == "NONE" {
				t.Errorf("%s waits for %s to be healthy, but %s has no health check", name, dep, dep)
			}
		}
	}

	// The service, the generator and the audit are one image built from deploy/Dockerfile.
	mg := services["mockgateway"]
	for _, name := range []string{"mockgateway", "traffic", "audit"} {
		s := services[name]
		if s.Image != mg.Image || s.Build == nil || s.Build.Dockerfile != "deploy/Dockerfile" || filepath.Clean(s.Build.Context) != repoRoot {
			t.Errorf("%s: want image %s built from deploy/Dockerfile with the repository as context", name, mg.Image)
		}
	}
	if got := mg.Build.Args["VERSION"]; got != serviceVersion(t) || mg.Image != "mockgateway:"+got {
		t.Errorf("image %s, VERSION build argument %s: want both to default to the service's version %s", mg.Image, got, serviceVersion(t))
	}
	if !slices.Equal(mg.Ports, []string{"127.0.0.1:8080:8080/tcp"}) {
		t.Errorf("mockgateway ports %v", mg.Ports)
	}
	if mg.Environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://jaeger:4318" {
		t.Errorf("mockgateway OTEL_EXPORTER_OTLP_ENDPOINT = %q", mg.Environment["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
	// The Host check holds on the container's 0.0.0.0 listener: the name the other services call
	// it by must be allowed (internal/server's TestHostAsTheContainerRuns runs it so).
	if !slices.Contains(strings.Split(mg.Environment["MOCKGATEWAY_ALLOWED_HOSTS"], ","), "mockgateway") {
		t.Errorf("mockgateway MOCKGATEWAY_ALLOWED_HOSTS = %q, want its service name among them", mg.Environment["MOCKGATEWAY_ALLOWED_HOSTS"])
	}
	logFile := mg.Environment["MOCKGATEWAY_LOG_FILE"]
	if !strings.HasPrefix(logFile, "/logs/") || !slices.Contains(mg.Volumes, "mockgateway-logs:/logs:rw") {
		t.Errorf("mockgateway log file %q must be on the shared volume mockgateway-logs:/logs (volumes %v)", logFile, mg.Volumes)
	}
	if !slices.Equal(mg.Healthcheck.Test, []string{"CMD", "/mockgateway", "healthcheck"}) {
		t.Errorf("mockgateway health check %v", mg.Healthcheck.Test)
	}

	tr := services["traffic"]
	if !slices.Equal(tr.Command[:3], []string{"traffic", "--target", "http://mockgateway:8080"}) {
		t.Errorf("traffic command %v", tr.Command)
	}
	if tr.Environment["MOCKGATEWAY_TRAFFIC_RATE"] != "2" {
		t.Errorf("traffic default rate %q, want a gentle 2", tr.Environment["MOCKGATEWAY_TRAFFIC_RATE"])
	}
	if tr.DependsOn["mockgateway"].Condition != "service_healthy" {
		t.Error("traffic must wait for a healthy mockgateway")
	}

	au := services["audit"]
	// The audit must search every source of the stack: the service, its log file, Prometheus
	// and Jaeger.
	auditFlags := map[string]string{}
	for i := 1; i+1 < len(au.Command); i += 2 {
		auditFlags[au.Command[i]] = au.Command[i+1]
	}
	if len(au.Command) == 0 || au.Command[0] != "audit" || auditFlags["--target"] != "http://mockgateway:8080" ||
		auditFlags["--logs"] != logFile || auditFlags["--prometheus"] != "http://prometheus:9090" ||
		!slices.Contains(strings.Split(auditFlags["--traces"], ","), "http://jaeger:16686") {
		t.Errorf("audit command %v does not search the service, %s, Prometheus and Jaeger", au.Command, logFile)
	}
	if !slices.Equal(au.Profiles, []string{"audit"}) || !slices.Equal(au.Volumes, []string{"mockgateway-logs:/logs:ro"}) {
		t.Errorf("audit: profiles %v volumes %v; want profile audit and the log volume read-only", au.Profiles, au.Volumes)
	}

	pr := services["prometheus"]
	for _, flag := range []string{"--config.file=/etc/prometheus/prometheus.yml", "--enable-feature=exemplar-storage"} {
		if !slices.Contains(pr.Command, flag) {
			t.Errorf("prometheus command lacks %s", flag)
		}
	}
	if !slices.Contains(pr.Volumes, repoPath("deploy", "prometheus")+":/etc/prometheus:ro") {
		t.Errorf("prometheus must mount deploy/prometheus at /etc/prometheus: %v", pr.Volumes)
	}
	if !strings.HasPrefix(pr.Image, "quay.io/prometheus/prometheus:v3.") {
		t.Errorf("prometheus image %s, want v3", pr.Image)
	}

	gr := services["grafana"]
	if gr.Environment["GF_AUTH_ANONYMOUS_ENABLED"] != "true" || gr.Environment["GF_AUTH_ANONYMOUS_ORG_ROLE"] != "Viewer" {
		t.Errorf("grafana must allow anonymous viewers: %v", gr.Environment)
	}
	provisioning := repoPath("deploy", "grafana", "provisioning") + ":/etc/grafana/provisioning:ro"
	if !slices.Contains(gr.Volumes, provisioning) {
		t.Errorf("grafana volumes %v lack %s", gr.Volumes, provisioning)
	}
	// Dashboards are mounted where the provisioning file says they are, and the home dashboard
	// is one of them.
	dashDir := dashboardProviderPath(t)
	if !slices.Contains(gr.Volumes, repoPath("dashboards")+":"+dashDir+":ro") {
		t.Errorf("grafana volumes %v do not mount dashboards/ at the provider path %s", gr.Volumes, dashDir)
	}
	home := gr.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
	if filepath.Dir(home) != dashDir {
		t.Errorf("home dashboard %s is not in %s", home, dashDir)
	} else if _, err := os.Stat(repoPath("dashboards", filepath.Base(home))); err != nil {
		t.Errorf("home dashboard: %v", err)
	}

	jg := services["jaeger"]
	if !slices.Equal(jg.Command, []string{"--config", "/etc/jaeger/config.yaml"}) ||
		!slices.Contains(jg.Volumes, repoPath("deploy", "jaeger", "config.yaml")+":/etc/jaeger/config.yaml:ro") {
		t.Errorf("jaeger must run deploy/jaeger/config.yaml: command %v volumes %v", jg.Command, jg.Volumes)
	}
	if !slices.Contains(jg.Ports, "127.0.0.1:16686:16686/tcp") {
		t.Errorf("jaeger UI must be on 127.0.0.1:16686: %v", jg.Ports)
	}
}
