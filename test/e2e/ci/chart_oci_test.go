package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/test/ociregistry"
	"github.com/karpgate/karpgate/test/toolbin"
)

// helmDigest is the line of `helm push` the release workflow reads the
// chart's digest from, to sign it.
var helmDigest = regexp.MustCompile(`(?m)^Digest: (sha256:[0-9a-f]{64})$`)

// TestChartFromOCIRegistry pushes the snapshot release's chart with helm
// to a real OCI registry (the CNCF distribution registry, on loopback, over
// TLS), as
// the release workflow pushes it to ghcr.io, and reads it back as users
// install it: by version and by the digest the workflow signs, helm
// renders from the registry exactly what it renders from the package.
func TestChartFromOCIRegistry(t *testing.T) {
	opts, a := snapshotRelease(t)
	helm := toolbin.Find(t, "KARPGATE_HELM", "helm")
	registry := ociregistry.Start(t)
	home := t.TempDir()
	// helm's own configuration and caches, no docker credentials of the
	// machine, and the registry's CA.
	env := append(os.Environ(), registry.Env()...)
	env = append(env, "HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"), "DOCKER_CONFIG="+filepath.Join(home, "docker"))
	// helm prints what it rendered or pushed on standard output, and what
	// it pulled ("Pulled: ...", "Digest: ...") on standard error.
	helmRun := func(t *testing.T, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(helm, args...)
		cmd.Env = env
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	chartVersion := strings.TrimPrefix(snapshotVersion, "v")
	repository := "oci://" + registry.Host + "/charts"
	ref := repository + "/karpgate"

	pushOut, pushErr := helmRun(t, "push", filepath.Join(opts.Out, a.Chart), repository)
	pushed := pushOut + pushErr
	m := helmDigest.FindStringSubmatch(pushed)
	if m == nil || !strings.Contains(pushed, "Pushed: "+registry.Host+"/charts/karpgate:"+chartVersion) {
		t.Fatalf("helm push does not say what it pushed and its digest (the release workflow signs that digest):\n%s", pushed)
	}
	digest := m[1]

	local, _ := helmRun(t, "template", "karpgate", filepath.Join(opts.Out, a.Chart), "--namespace", "karpgate")
	for _, from := range [][]string{
		{ref, "--version", chartVersion},
		{ref + "@" + digest},
	} {
		t.Run("helm template "+from[0], func(t *testing.T) {
			args := append([]string{"template", "karpgate"}, from...)
			got, pulled := helmRun(t, append(args, "--namespace", "karpgate")...)
			if got != local {
				t.Errorf("helm template from the registry differs from the package's:\n%s", got)
			}
			if !strings.Contains(pulled, "Digest: "+digest) {
				t.Errorf("helm did not pull the digest it pushed (%s):\n%s", digest, pulled)
			}
			chart, _ := helmRun(t, append([]string{"show", "chart"}, from...)...)
			if !strings.Contains(chart, "version: "+chartVersion) || !strings.Contains(chart, "appVersion: "+snapshotVersion) {
				t.Errorf("helm show chart:\n%s", chart)
			}
		})
	}
	if !strings.Contains(local, `image: "ghcr.io/karpgate/karpgate:`+snapshotVersion+`"`) {
		t.Errorf("the chart does not install the release's image ghcr.io/karpgate/karpgate:%s", snapshotVersion)
	}
}
