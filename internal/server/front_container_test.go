package server

import (
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"mockgateway/internal/config"
)

// TestHostAsTheContainerRuns: the service configured as docker compose runs it — the runtime
// stage's ENV of deploy/Dockerfile, then the compose service's environment and command — on a
// listener of that address (0.0.0.0 in the container, published on the laptop's 127.0.0.1).
// A page whose name was rebound to 127.0.0.1 adds no fixture and reads nothing; every name the
// stack itself calls the service by (the compose service's, the traffic generator's and the
// audit's --target, Prometheus' scrape target) and the published 127.0.0.1:8080 keep working.
func TestHostAsTheContainerRuns(t *testing.T) {
	root := filepath.Join("..", "..")
	env := dockerfileEnv(t, filepath.Join(root, "deploy", "Dockerfile"))
	var compose struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	readYAML(t, filepath.Join(root, "docker-compose.yml"), &compose)
	const service = "mockgateway"
	svc, ok := compose.Services[service]
	if !ok {
		t.Fatalf("docker-compose.yml has no %s service", service)
	}
	for k, v := range svc.Environment {
		env[k] = composeDefault(v)
	}
	cfg, err := config.Parse(svc.Command, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the container's configuration: %v", err)
	}
	if loopbackListen(cfg.Addr) {
		t.Fatalf("--addr %s: the container is expected to listen on every interface", cfg.Addr)
	}

	// Every Host the stack calls the service by.
	hosts := map[string]bool{service + ":8080": true, "127.0.0.1:8080": true, "localhost:8080": true}
	for _, s := range compose.Services {
		for i, a := range s.Command {
			if a == "--target" && i+1 < len(s.Command) {
				u, err := url.Parse(s.Command[i+1])
				if err != nil {
					t.Fatal(err)
				}
				hosts[u.Host] = true
			}
		}
	}
	var prom struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, filepath.Join(root, "deploy", "prometheus", "prometheus.yml"), &prom)
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				if sc.JobName == service {
					hosts[target] = true
				}
			}
		}
	}

	_, srv := browserServer(t, func(d *Deps) { d.Config = cfg })
	for _, host := range []string{"attacker.example:8080", "attacker.example"} {
		resp, body := send(t, srv, "POST", "/_mock/fixtures", host, pwn, "Origin", "http://"+host, "Content-Type", "application/json")
		refused(t, "POST fixture as "+host, resp, body, "host_not_allowed")
		for _, path := range []string{"/_mock/journal", "/debug/traces"} {
			resp, body := send(t, srv, "GET", path, host, "", "Origin", "http://"+host)
			refused(t, "GET "+path+" as "+host, resp, body, "host_not_allowed")
		}
	}
	if !echoed(t, srv) {
		t.Error("a rebinding page's fixture answers the developer's calls")
	}
	for host := range hosts {
		fixture := `{"fixtures":[{"name":"f","match":{"last_user":{"contains":"x"}},"reply":{"content":"ok"}}]}`
		if resp, body := send(t, srv, "POST", "/_mock/fixtures", host, fixture, "Origin", "http://"+host, "Content-Type", "application/json", HeaderScope, host); resp.StatusCode != 200 {
			t.Errorf("POST /_mock/fixtures as %s: %d %s", host, resp.StatusCode, body)
		}
		for _, path := range []string{"/v1/models", "/metrics", "/_mock/journal"} {
			if resp, body := send(t, srv, "GET", path, host, ""); resp.StatusCode != 200 {
				t.Errorf("GET %s as %s: %d %s", path, host, resp.StatusCode, body)
			}
		}
	}
}

// dockerfileEnv is the environment the runtime stage (after the last FROM) sets with ENV KEY=VALUE.
func dockerfileEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "FROM ") {
			clear(env)
		}
		if rest, ok := strings.CutPrefix(line, "ENV "); ok {
			for _, kv := range strings.Fields(rest) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("%s: %q: want ENV KEY=VALUE", path, line)
				}
				env[k] = strings.Trim(v, `"`)
			}
		}
	}
	if len(env) == 0 {
		t.Fatalf("%s sets no ENV in its runtime stage", path)
	}
	return env
}

// composeDefault is a compose value with each ${VAR:-default} taken at its default.
func composeDefault(v string) string {
	return regexp.MustCompile(`\$\{[A-Z0-9_]+:-([^}]*)\}`).ReplaceAllString(v, "$1")
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// loopbackListen reports whether an --addr binds a loopback address only.
func loopbackListen(addr string) bool {
	host, _, _ := strings.Cut(addr, ":")
	return host == "127.0.0.1" || host == "localhost" || strings.HasPrefix(addr, "[::1]")
}
