package test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Prometheus the tests run is the release docker-compose.yml runs, built by deps.sh from the
// Prometheus Go module this module requires (module v0.MMM.P is release v3.(MMM-300).P) and
// cached per release in os.UserCacheDir()/mockgateway/prometheus-vX.Y.Z/.

const prometheusModule = "github.com/prometheus/prometheus"

var (
	promModOnce    sync.Once
	promModVersion string
	promModErr     error
)

// prometheusModuleVersion is the version of the Prometheus module deploy/test/go.mod requires:
// the one whose parser the tests use, and whose binaries deps.sh builds. (A test binary's
// debug.ReadBuildInfo lists no dependencies, so ask go list.)
func prometheusModuleVersion(t *testing.T) string {
	t.Helper()
	promModOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", prometheusModule).CombinedOutput()
		promModVersion, promModErr = strings.TrimSpace(string(out)), err
		if err != nil {
			promModErr = fmt.Errorf("go list -m %s: %v\n%s", prometheusModule, err, out)
		}
	})
	if promModErr != nil {
		t.Fatal(promModErr)
	}
	return promModVersion
}

// prometheusRelease turns a module version v0.313.1 into the release 3.13.1.
func prometheusRelease(moduleVersion string) (string, error) {
	m := regexp.MustCompile(`^v0\.3(\d\d)\.(\d+)$`).FindStringSubmatch(moduleVersion)
	if m == nil {
		return "", fmt.Errorf("%s %s is not a v0.3xx.y (Prometheus 3) module version", prometheusModule, moduleVersion)
	}
	minor, _ := strconv.Atoi(m[1])
	return fmt.Sprintf("3.%d.%s", minor, m[2]), nil
}

var (
	promBinOnce sync.Once
	promBinDir  string
	promBinErr  error
)

// prometheusTool returns the path of the cached prometheus or promtool, and fails (never skips)
// when it is missing or is not the release the module version names.
func prometheusTool(t *testing.T, name string) string {
	t.Helper()
	release, err := prometheusRelease(prometheusModuleVersion(t))
	if err != nil {
		t.Fatal(err)
	}
	promBinOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			promBinErr = err
			return
		}
		promBinDir = filepath.Join(cache, "mockgateway", "prometheus-v"+release)
		for _, tool := range []string{"prometheus", "promtool"} {
			out, err := exec.Command(filepath.Join(promBinDir, tool), "--version").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "version "+release+" ") {
				promBinErr = fmt.Errorf("%s v%s is not built in %s (%v: %.200s): run `bash deploy/test/deps.sh`, which builds it from %s",
					tool, release, promBinDir, err, out, prometheusModule)
				return
			}
		}
	})
	if promBinErr != nil {
		t.Fatal(promBinErr)
	}
	return filepath.Join(promBinDir, name)
}

// TestPrometheusVersionsAgree: the image docker-compose.yml runs, the module deploy/test
// requires (its PromQL parser and the binaries deps.sh builds) and the binaries in the cache are
// one release, so the tests check the configuration with the Prometheus the stack ships.
func TestPrometheusVersionsAgree(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	mod := prometheusModuleVersion(t)
	release, err := prometheusRelease(mod)
	if err != nil {
		t.Fatal(err)
	}
	image := normalizedCompose(t)["prometheus"].Image
	if want := "quay.io/prometheus/prometheus:v" + release; image != want {
		t.Errorf("docker-compose.yml runs %s, but deploy/test/go.mod requires %s %s (release v%s): keep them equal",
			image, prometheusModule, mod, release)
	}
	for _, tool := range []string{"prometheus", "promtool"} {
		out, err := exec.Command(prometheusTool(t, tool), "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), tool+", version "+release+" ") {
			t.Errorf("%s --version: %v\n%s", tool, err, out)
		}
	}
}

// composePrometheusFlags returns the prometheus service's command flags from docker-compose.yml,
// less the ones a test sets itself (configuration, storage, listen address), so the test server
// runs with the very feature flags and settings of the stack.
func composePrometheusFlags(t *testing.T) []string {
	t.Helper()
	cmd := normalizedCompose(t)["prometheus"].Command
	var flags []string
	for _, f := range cmd {
		switch name, _, _ := strings.Cut(f, "="); name {
		case "--config.file", "--storage.tsdb.path", "--web.listen-address":
			continue
		}
		flags = append(flags, f)
	}
	if !strings.Contains(strings.Join(flags, " "), "--enable-feature=exemplar-storage") {
		t.Fatalf("docker-compose.yml's prometheus command %v has no --enable-feature=exemplar-storage", cmd)
	}
	return flags
}

// prometheusServer is the Prometheus v3 started by a test.
type prometheusServer struct {
	*process
	url string
}

// startPrometheus runs Prometheus with the compose stack's flags on a loopback port with a
// temporary storage directory, and waits until it is ready. The port is picked free a moment
// before the start; a lost race (another process took it) is retried.
func startPrometheus(t *testing.T, configPath string) *prometheusServer {
	t.Helper()
	bin := prometheusTool(t, "prometheus")
	composeFlags := composePrometheusFlags(t)
	for attempt := 0; attempt < 3; attempt++ {
		addr := "127.0.0.1:" + freeLoopbackPort(t)
		args := append([]string{
			"--config.file=" + configPath,
			"--storage.tsdb.path=" + filepath.Join(t.TempDir(), "data"),
			"--web.listen-address=" + addr,
			"--log.level=warn",
		}, composeFlags...)
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		p := startProcess(t, cmd, 10*time.Second)
		srv := &prometheusServer{process: p, url: "http://" + addr}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && p.running() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			status, _, err := httpGet(ctx, srv.url+"/-/ready", nil)
			cancel()
			if err == nil && status == 200 {
				return srv
			}
			time.Sleep(200 * time.Millisecond)
		}
		p.stop(5 * time.Second)
		if !strings.Contains(p.output.String(), "address already in use") {
			t.Fatalf("prometheus did not become ready:\n%s", tail(p.output.String(), 3000))
		}
	}
	t.Fatal("prometheus: no free loopback port after 3 attempts")
	return nil
}
