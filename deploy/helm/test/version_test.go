package helmtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// repoRoot is the service's module, three levels up.
var repoRoot = filepath.Join("..", "..", "..")

// TestVersionsAgree: the chart's appVersion, the default image tag, docker-compose.yml's
// default MOCKGATEWAY_VERSION, deploy/Dockerfile's ARG VERSION and the binary's version are one.
func TestVersionsAgree(t *testing.T) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	want := chrt.Metadata.AppVersion
	found := map[string][]string{}
	grep := func(file, pattern string) {
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(string(data), -1) {
			found[file] = append(found[file], m[1])
		}
		if len(found[file]) == 0 {
			t.Errorf("%s: no match for %s", file, pattern)
		}
	}
	grep("cmd/mockgateway/run.go", `(?m)^var version = "([^"]+)"`)
	grep("deploy/Dockerfile", `(?m)^ARG VERSION=(\S+)`)
	grep("docker-compose.yml", `MOCKGATEWAY_VERSION:-([^}]+)\}`)
	image := deployment(t, mustInstall(t, renderOpts{})).Spec.Template.Spec.Containers[0].Image
	_, tag, _ := strings.Cut(image, ":")
	found["the default image tag"] = []string{tag}
	for where, versions := range found {
		for _, v := range versions {
			if v != want {
				t.Errorf("%s has %s, the chart's appVersion is %s", where, v, want)
			}
		}
	}
}
