package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func TestTarGzDependsOnlyOnItsFiles(t *testing.T) {
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	files := []file{{name: "b/x", mode: 0o644, data: []byte("x")}, {name: "a", mode: 0o755, data: []byte("a")}}
	first, err := tarGz(files, date)
	if err != nil {
		t.Fatal(err)
	}
	// The same files in another order, at another wall-clock time.
	second, err := tarGz([]file{files[1], files[0]}, date)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("two archives of the same files differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(date) || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: %v %d %q", h.Name, h.ModTime, h.Uid, h.Uname)
		}
		got = append(got, h.Name)
	}
	if strings.Join(got, " ") != "a b/ b/x" {
		t.Errorf("entries %v, want a, b/, b/x", got)
	}
}

func TestKrewManifest(t *testing.T) {
	data, err := krewManifest("v1.2.3", []builtArchive{
		{platform: Platform{"linux", "amd64"}, name: "karpgate_v1.2.3_linux_amd64.tar.gz", sha256: strings.Repeat("a", 64)},
		{platform: Platform{"darwin", "arm64"}, name: "karpgate_v1.2.3_darwin_arm64.tar.gz", sha256: strings.Repeat("b", 64)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Metadata.Name != "karpgate" || p.Spec.Version != "v1.2.3" || len(p.Spec.Platforms) != 2 {
		t.Fatalf("manifest:\n%s", data)
	}
	if pl := p.Spec.Platforms[1]; pl.URI != Homepage+"/releases/download/v1.2.3/karpgate_v1.2.3_darwin_arm64.tar.gz" ||
		pl.SHA256 != strings.Repeat("b", 64) || pl.Selector.MatchLabels["os"] != "darwin" || pl.Bin != "karpgate" {
		t.Errorf("darwin/arm64 platform: %+v", pl)
	}
}

func TestBuildRefusesAVersionKrewCannotRead(t *testing.T) {
	for _, v := range []string{"1.2.3", "v1.2", "8e05241", "v1.2.3-dirty+x"} {
		if _, err := Build(t.Context(), Options{Version: v}); err == nil || !strings.Contains(err.Error(), "not a semantic version") {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

func TestSetLines(t *testing.T) {
	got, err := setLines([]byte("name: karpgate\nversion: 0.1.0\nappVersion: v0.1.0\n"), map[string]string{"version: ": "1.2.3", "appVersion: ": "v1.2.3"})
	if err != nil || string(got) != "name: karpgate\nversion: 1.2.3\nappVersion: v1.2.3\n" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := setLines([]byte("name: x\n"), map[string]string{"version: ": "1"}); err == nil {
		t.Fatal("a missing line must be an error")
	}
}
