package release

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin), typed after krew's own index types so that what krew reads is
// what is written: krew installs the archive of the matching platform,
// checks its sha256, and links bin as kubectl-karpgate on PATH.
type krewPlugin struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   krewMetadata `json:"metadata"`
	Spec       krewSpec     `json:"spec"`
}

type krewMetadata struct {
	Name string `json:"name"`
}

type krewSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description"`
	Platforms        []krewPlatform `json:"platforms"`
}

type krewPlatform struct {
	Selector krewSelector `json:"selector"`
	URI      string       `json:"uri"`
	SHA256   string       `json:"sha256"`
	Files    []krewFile   `json:"files"`
	Bin      string       `json:"bin"`
}

type krewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type krewFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// krewPluginName is the plugin's name in krew's index: `kubectl krew
// install karpgate`, run as `kubectl karpgate`.
const krewPluginName = "karpgate"

// Homepage is where the krew manifest and the archives point.
const Homepage = "https://github.com/karpgate/karpgate"

const krewDescription = `karpgate checks Karpenter NodePools, EC2NodeClasses and NodeClaims before
they break a fleet, offline as CI does (kubectl karpgate lint), converts
v1beta1 manifests to v1 (kubectl karpgate convert), shows what disruption
budgets allow (kubectl karpgate budgets, status, explain) and freezes or
resumes drift rollouts (kubectl karpgate freeze, resume).
`

// krewManifest writes the manifest for the archives built, each with the
// URI it is published at and its sha256.
func krewManifest(version string, archives []builtArchive) ([]byte, error) {
	p := krewPlugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   krewMetadata{Name: krewPluginName},
		Spec: krewSpec{
			Version:          version,
			Homepage:         Homepage,
			ShortDescription: "Lint, convert and explain Karpenter NodePools and EC2NodeClasses",
			Description:      krewDescription,
		},
	}
	for _, a := range archives {
		p.Spec.Platforms = append(p.Spec.Platforms, krewPlatform{
			Selector: krewSelector{MatchLabels: map[string]string{"os": a.platform.OS, "arch": a.platform.Arch}},
			URI:      fmt.Sprintf("%s/releases/download/%s/%s", Homepage, version, a.name),
			SHA256:   a.sha256,
			Files:    []krewFile{{From: binaryName, To: "."}, {From: "README.md", To: "."}},
			Bin:      binaryName,
		})
	}
	return yaml.Marshal(p)
}
