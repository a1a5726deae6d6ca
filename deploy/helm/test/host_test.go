package helmtest

import (
	"net/http"
	"strings"
	"testing"
)

// TestRenderedPodChecksHost runs the binary with a rendered pod's args and env and calls it by
// every name it is reached by: the Service's names in the cluster (NAME, NAME.NAMESPACE, …svc,
// …svc.cluster.local: other pods, the helm test hook), config.allowedHosts, a pod IP (probes,
// the ServiceMonitor's Prometheus), 127.0.0.1 and localhost (kubectl port-forward) — all
// served; a page whose name was rebound to the port-forward's 127.0.0.1 is refused: it adds no
// fixture and reads neither the journal nor the traces.
func TestRenderedPodChecksHost(t *testing.T) {
	bin := buildBinary(t)
	r := mustInstall(t, renderOpts{values: "config:\n  allowedHosts: mock.example.com,.corp.test\n"})
	d := deployment(t, r)
	svc, ns := r.only(t, "Service").name, "llm"
	p := startPod(t, bin, r, d)
	defer p.stop(t, *d.Spec.Template.Spec.TerminationGracePeriodSeconds)

	fixture := `{"fixtures":[{"name":"f","match":{},"reply":{"content":"pwned"}}]}`
	call := func(method, path, host, body string) (int, string) {
		p.headers = map[string]string{"Host": host, "Origin": "http://" + host, "X-Mock-Scope": strings.NewReplacer("[", "", "]", "").Replace(host)}
		return p.do(t, method, path, body)
	}
	for _, host := range []string{"attacker.example:8080", "attacker.example", svc + ".attacker.example", svc + "." + ns + ".svc.cluster.local.attacker.example:8080"} {
		if status, body := call(http.MethodPost, "/_mock/fixtures", host, fixture); status != http.StatusForbidden || !strings.Contains(body, `"host_not_allowed"`) {
			t.Errorf("POST /_mock/fixtures as %s: %d %s, want 403 host_not_allowed", host, status, body)
		}
		for _, path := range []string{"/_mock/journal", "/debug/traces", "/v1/models"} {
			if status, body := call(http.MethodGet, path, host, ""); status != http.StatusForbidden || !strings.Contains(body, `"host_not_allowed"`) {
				t.Errorf("GET %s as %s: %d %s, want 403 host_not_allowed", path, host, status, body)
			}
		}
	}
	for _, host := range []string{svc, svc + ":8080", svc + "." + ns, svc + "." + ns + ".svc:8080", svc + "." + ns + ".svc.cluster.local:8080",
		"mock.example.com", "a.corp.test:8080", "10.42.0.7:8080", "[fd00:10:42::7]:8080", "127.0.0.1:8080", "localhost:8080"} {
		if status, body := call(http.MethodPost, "/_mock/fixtures", host, fixture); status != http.StatusOK {
			t.Errorf("POST /_mock/fixtures as %s: %d %s", host, status, body)
		}
		for _, path := range []string{"/_mock/journal", "/metrics", "/v1/models", "/health"} {
			if status, body := call(http.MethodGet, path, host, ""); status != http.StatusOK {
				t.Errorf("GET %s as %s: %d %s", path, host, status, body)
			}
		}
	}
}

// TestAllowedHostsRendered: the pod's --allowed-hosts names the Service as the cluster's DNS
// does, in the cluster's domain, then config.allowedHosts; the flag is given once (a second
// would replace the first).
func TestAllowedHostsRendered(t *testing.T) {
	for values, want := range map[string]string{
		"": "--allowed-hosts=mg-mockgateway,mg-mockgateway.llm,mg-mockgateway.llm.svc,mg-mockgateway.llm.svc.cluster.local",
		"clusterDomain: k8s.corp\nconfig: {allowedHosts: mock.example.com}": "--allowed-hosts=mg-mockgateway,mg-mockgateway.llm,mg-mockgateway.llm.svc,mg-mockgateway.llm.svc.k8s.corp,mock.example.com",
		"fullnameOverride: llm-mock\nconfig: {allowedHosts: null}":          "--allowed-hosts=llm-mock,llm-mock.llm,llm-mock.llm.svc,llm-mock.llm.svc.cluster.local",
	} {
		var got []string
		for _, a := range deployment(t, mustInstall(t, renderOpts{values: values})).Spec.Template.Spec.Containers[0].Args {
			if strings.HasPrefix(a, "--allowed-hosts=") {
				got = append(got, a)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("values %q: %q, want %q", values, got, want)
		}
	}
}
