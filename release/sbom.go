package release

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// The SPDX 2.3 document of one binary, with only the fields this SBOM
// fills: who made it and when, one package per Go module linked (with its
// purl), the Go standard library, and DEPENDS_ON from karpgate to each.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID           string            `json:"SPDXID"`
	Name             string            `json:"name"`
	VersionInfo      string            `json:"versionInfo"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	LicenseConcluded string            `json:"licenseConcluded"`
	LicenseDeclared  string            `json:"licenseDeclared"`
	CopyrightText    string            `json:"copyrightText"`
	ExternalRefs     []spdxExternalRef `json:"externalRefs"`
	// Comment carries the go.sum hash of a module, which SPDX has no
	// checksum algorithm for.
	Comment string `json:"comment,omitempty"`
}

type spdxExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

var spdxIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// sbom describes the binary at path: the module information the Go
// toolchain recorded in it (what `go version -m` prints) is exactly what
// it links. namespace must be unique to this document.
func sbom(path, name, namespace, version string, created time.Time) ([]byte, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the module information of %s: %w", path, err)
	}
	pkg := func(module, version, sum string) spdxPackage {
		return spdxPackage{
			SPDXID:           "SPDXRef-Package-" + spdxIDUnsafe.ReplaceAllString(module+"-"+version, "-"),
			Name:             module,
			VersionInfo:      version,
			DownloadLocation: "NOASSERTION",
			LicenseConcluded: "NOASSERTION",
			LicenseDeclared:  "NOASSERTION",
			CopyrightText:    "NOASSERTION",
			ExternalRefs:     []spdxExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + module + "@" + version}},
			Comment:          sum,
		}
	}
	// The release's version, what `karpgate version` reports: the build
	// information says (devel), and -trimpath keeps the -ldflags that
	// stamp the version out of it.
	mainVersion := version
	main := pkg(info.Main.Path, mainVersion, "")
	stdlib := pkg("stdlib", info.GoVersion, "")
	doc := spdxDocument{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              name,
		DocumentNamespace: namespace,
		CreationInfo:      spdxCreationInfo{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: karpgate-dev-release"}},
		Packages:          []spdxPackage{main, stdlib},
		Relationships: []spdxRelationship{
			{"SPDXRef-DOCUMENT", "DESCRIBES", main.SPDXID},
			{main.SPDXID, "DEPENDS_ON", stdlib.SPDXID},
		},
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		p := pkg(dep.Path, dep.Version, dep.Sum)
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelationship{main.SPDXID, "DEPENDS_ON", p.SPDXID})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
