package ci

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/release"
	"github.com/karpgate/karpgate/test/golden"
)

// releaseWorkflow is the part of .github/workflows/release.yaml the docs
// depend on. It is read as YAML 1.2, as GitHub reads it: to a YAML 1.1
// reader (sigs.k8s.io/yaml) the key "on" is the boolean true.
type releaseWorkflow struct {
	On struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]struct {
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// docPin is a name of a published thing that a doc pins to a release.
var (
	docImage   = regexp.MustCompile(`ghcr\.io/[a-z0-9./-]+:[0-9A-Za-z.+-]+`)
	docChart   = regexp.MustCompile(`oci://[a-z0-9./-]+(?:\s+--version\s+([0-9A-Za-z.+-]+))?`)
	docFile    = regexp.MustCompile(`releases/download/(v[0-9A-Za-z.+-]+)/([A-Za-z0-9_.$/{}-]+)`)
	docArchive = regexp.MustCompile(`karpgate_(v[0-9][0-9A-Za-z.+-]*|\$\{KARPGATE_VERSION\})_([a-z0-9]+)_([a-z0-9]+)\.([a-z.]+[a-z])`)
	docVersion = regexp.MustCompile(`(?:karpgate/karpgate@|rev: |KARPGATE_VERSION: |refs/tags/)(v[0-9]+\.[0-9]+\.[0-9]+)`)
)

// TestDocsPinWhatTheReleasePublishes reads what the release workflow
// publishes for a tag (the image, the chart's OCI repository, the files of
// the GitHub release) and checks every name README.md and docs/ pin to a
// release against it: one version throughout, the image and the chart
// where the workflow pushes them, and only files a release has.
func TestDocsPinWhatTheReleasePublishes(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf releaseWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) || len(wf.Permissions) != 0 {
		t.Errorf("the release workflow runs on tags %v with default permissions %v; want v* and none", wf.On.Push.Tags, wf.Permissions)
	}
	image, chartRepo := wf.Env["IMAGE"], wf.Env["CHART_REPOSITORY"]
	if image == "" || chartRepo == "" {
		t.Fatalf("the release workflow's env names no IMAGE or CHART_REPOSITORY: %v", wf.Env)
	}

	docs := golden.Glob(t, filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	versions := map[string][]string{} // version -> where
	type download struct{ doc, version, name string }
	var downloads []download
	pin := func(doc, version string) { versions[version] = append(versions[version], doc) }
	for _, file := range docs {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := filepath.Rel(root, file)
		for _, m := range docImage.FindAllString(string(text), -1) {
			repo, tag, _ := strings.Cut(m, ":")
			switch repo {
			case image:
				pin(doc, tag)
			case strings.TrimPrefix(chartRepo, "oci://") + "/karpgate":
				pin(doc, "v"+tag)
			default:
				t.Errorf("%s names %s; the release workflow pushes the image %s and the chart %s/karpgate", doc, m, image, chartRepo)
			}
		}
		for _, m := range docChart.FindAllStringSubmatch(string(text), -1) {
			ref := strings.Fields(m[0])[0]
			if ref != chartRepo+"/karpgate" && !strings.HasPrefix(ref, "oci://localhost") {
				t.Errorf("%s installs the chart from %s; the release workflow pushes it to %s/karpgate", doc, ref, chartRepo)
			}
			if m[1] != "" {
				pin(doc, "v"+m[1])
			}
		}
		for _, m := range docFile.FindAllStringSubmatch(string(text), -1) {
			pin(doc, m[1])
			downloads = append(downloads, download{doc, m[1], m[2]})
		}
		for _, m := range docArchive.FindAllStringSubmatch(string(text), -1) {
			if !strings.HasPrefix(m[1], "$") {
				pin(doc, m[1])
			}
			if !slices.Contains(release.Platforms, release.Platform{OS: m[2], Arch: m[3]}) || m[4] != "tar.gz" {
				t.Errorf("%s names %s; a release has .tar.gz archives for %v", doc, m[0], release.Platforms)
			}
		}
		for _, m := range docVersion.FindAllStringSubmatch(string(text), -1) {
			pin(doc, m[1])
		}
	}
	if len(versions) != 1 {
		t.Fatalf("the docs pin %d releases, want one: %v", len(versions), versions)
	}
	for _, d := range downloads {
		if !published(t, wf, d.version)[d.name] {
			t.Errorf("%s downloads %s from release %s; a release publishes %v", d.doc, d.name, d.version, sortedNames(published(t, wf, d.version)))
		}
	}
}

// published applies the `gh release create` step's globs to a folder
// holding what `make release` writes for every platform and the workflow
// signs, and returns the names the GitHub release gets (gh names each file
// by its base name).
func published(t *testing.T, wf releaseWorkflow, version string) map[string]bool {
	t.Helper()
	var create string
	for _, s := range wf.Jobs["artifacts"].Steps {
		if s.ID == "publish" {
			create = s.Run
		}
	}
	if !strings.Contains(create, "gh release create") {
		t.Fatalf("the release workflow's artifacts job has no publish step running gh release create")
	}
	written := []string{"karpgate-" + strings.TrimPrefix(version, "v") + ".tgz", "karpgate.schema.json", "krew/karpgate.yaml", "checksums.txt", "checksums.txt.sigstore.json"}
	for _, p := range release.Platforms {
		archive := fmt.Sprintf("karpgate_%s_%s_%s.tar.gz", version, p.OS, p.Arch)
		written = append(written, archive, archive+".sbom.spdx.json")
	}
	published := map[string]bool{}
	for _, arg := range strings.Fields(create) {
		if !strings.HasPrefix(arg, "dist/") {
			continue
		}
		matched := false
		for _, name := range written {
			// bash's globbing, for the patterns a publish step has.
			if ok, err := path.Match(arg, "dist/"+name); err != nil {
				t.Fatalf("the publish step's %s: %v", arg, err)
			} else if ok {
				published[path.Base(name)], matched = true, true
			}
		}
		if !matched {
			t.Errorf("the publish step's %s matches nothing make release writes", arg)
		}
	}
	if len(published) != len(written) {
		t.Errorf("the GitHub release gets %v; make release and the signing write %v", sortedNames(published), written)
	}
	return published
}

func sortedNames(m map[string]bool) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// usesLine is a `uses:` of a workflow or of action.yml, with the comment
// that names the pinned commit's version.
var usesLine = regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+)[ \t]*(?:#[ \t]*(\S+))?`)

// TestWorkflowsPinActionsByCommit checks every action karpgate's workflows
// and its own action use: pinned to a full commit, whose version the line's
// comment names (as Dependabot and Renovate keep them), so that a tag
// moved upstream cannot change what runs with the release's permissions.
func TestWorkflowsPinActionsByCommit(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := append(golden.Glob(t, filepath.Join(root, ".github", "workflows", "*.yaml")), filepath.Join(root, "action.yml"))
	pinned := regexp.MustCompile(`^[a-z0-9-]+/[a-z0-9._/-]+@[0-9a-f]{40}$`)
	uses := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		for _, m := range usesLine.FindAllStringSubmatch(string(data), -1) {
			uses++
			if m[1] == "./" {
				continue // this repository's own action, at the commit tested
			}
			if !pinned.MatchString(m[1]) || !regexp.MustCompile(`^v[0-9]+(\.[0-9]+)*$`).MatchString(m[2]) {
				t.Errorf("%s uses %s # %s: pin a full commit SHA and name its version in a comment (uses: owner/repo@<sha> # v1.2.3)", name, m[1], m[2])
			}
		}
	}
	if uses < 10 {
		t.Errorf("found %d uses: lines; the pattern no longer matches the workflows", uses)
	}
}
