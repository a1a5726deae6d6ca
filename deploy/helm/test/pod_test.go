package helmtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// pod is the binary running as the rendered container would.
type pod struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	root    string // where the pod's mounts are
	exited  chan error
	logs    *strings.Builder
	headers map[string]string
}

func startPod(t *testing.T, bin string, r *release, d *appsv1.Deployment) *pod {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	p := &pod{root: t.TempDir(), exited: make(chan error, 1), logs: &strings.Builder{}}
	port := freePort(t)
	p.base = "http://127.0.0.1:" + strconv.Itoa(port)

	// Mounts: each path of the container maps to a directory under root; ConfigMaps get
	// the kubelet's layout.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		dir := filepath.Join(p.root, m.Name)
		mounts[m.MountPath] = dir
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				writeConfigMap(t, dir, configMapData(t, r, v.ConfigMap.Name), "..v1")
			} else if v.Name == m.Name {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	remap := func(s string) string {
		for mp, dir := range mounts {
			if s == mp || strings.HasPrefix(s, mp+"/") {
				return dir + strings.TrimPrefix(s, mp)
			}
		}
		return s
	}
	var args []string
	for _, a := range c.Args {
		flag, val, _ := strings.Cut(a, "=")
		if flag == "--addr" {
			val = "127.0.0.1:" + strconv.Itoa(port)
		}
		args = append(args, flag+"="+remap(val))
	}
	env := resolveEnv(t, r, c)
	p.headers = map[string]string{}
	if k := env["MOCKGATEWAY_API_KEY"]; k != "" {
		p.headers["Authorization"] = "Bearer " + k
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + mounts["/tmp"]}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-p.exited:
			t.Fatalf("the binary exited at start-up (%v) with args %q:\n%s", err, args, p.logs)
		default:
		}
		if status, _ := p.get(t, "/health"); status == http.StatusOK {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health never answered 200:\n%s", p.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM, as the kubelet does after preStop, and wants exit 0 within the grace.
func (p *pod) stop(t *testing.T, graceSeconds int64) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.logs)
		}
	case <-time.After(time.Duration(graceSeconds) * time.Second):
		t.Errorf("still running %d s after SIGTERM: the kubelet would kill it", graceSeconds)
	}
}

func (p *pod) get(t *testing.T, path string) (int, string) {
	return p.do(t, http.MethodGet, path, "")
}

func (p *pod) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range p.headers {
		if k == "Host" {
			req.Host = v // the name the pod is called by: a Service's, a pod IP, a rebound page's
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func configMapData(t *testing.T, r *release, name string) map[string]string {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == "ConfigMap" && o.name == name {
			var cm corev1.ConfigMap
			if err := decodeStrict(o.raw, &cm); err != nil {
				t.Fatal(err)
			}
			return cm.Data
		}
	}
	t.Fatalf("no ConfigMap %s rendered", name)
	return nil
}

// writeConfigMap lays data out as the kubelet does: dir/<version>/<file>, dir/..data -> <version>,
// dir/<file> -> ..data/<file>; a later call swaps ..data atomically to the new version.
func writeConfigMap(t *testing.T, dir string, data map[string]string, version string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, content := range data {
		if err := os.WriteFile(filepath.Join(dir, version, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, file)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", file), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// resolveEnv does the kubelet's part: values, Secrets (rendered, or a stand-in for one the
// user manages), the downward API, and $(VAR) references to earlier variables.
func resolveEnv(t *testing.T, r *release, c corev1.Container) map[string]string {
	t.Helper()
	out := map[string]string{}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
			v = ref.ReplaceAllStringFunc(v, func(m string) string {
				if x, ok := out[m[2:len(m)-1]]; ok {
					return x
				}
				return m
			})
		case e.ValueFrom.SecretKeyRef != nil:
			v = secretValue(t, r, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
		case e.ValueFrom.FieldRef != nil:
			v = map[string]string{"metadata.name": "mg-mockgateway-0", "metadata.namespace": "llm", "spec.nodeName": "node-1"}[e.ValueFrom.FieldRef.FieldPath]
		case e.ValueFrom.ResourceFieldRef != nil:
			q := c.Resources.Limits[corev1.ResourceName(strings.TrimPrefix(e.ValueFrom.ResourceFieldRef.Resource, "limits."))]
			v = strconv.FormatInt(q.Value()/divisor(e.ValueFrom.ResourceFieldRef.Divisor), 10)
		default:
			t.Fatalf("env %s: a source this test does not resolve", e.Name)
		}
		out[e.Name] = v
	}
	return out
}

func divisor(q resource.Quantity) int64 {
	if q.IsZero() {
		return 1
	}
	return q.Value()
}

func secretValue(t *testing.T, r *release, name, key string) string {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == "Secret" && o.name == name {
			var s corev1.Secret
			if err := decodeStrict(o.raw, &s); err != nil {
				t.Fatal(err)
			}
			return string(s.Data[key])
		}
	}
	return "key-from-" + name // a Secret the user manages
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// parseSeconds reads a whole-second duration such as 5s.
func parseSeconds(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d%time.Second != 0 {
		return 0, fmt.Errorf("drain timeout %q is not whole seconds", s)
	}
	return int64(d / time.Second), nil
}
