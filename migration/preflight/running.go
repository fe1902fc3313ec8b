package preflight

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// Running is the Karpenter release an upgrade starts from, and how
// preflight knows it.
type Running struct {
	// Version is the release running, "" when nothing says.
	Version string `json:"version,omitempty"`
	// Source says where Version was read: --from, the controller's
	// Deployment, or the CRDs installed.
	Source string `json:"source"`
	// Notes say where the sources disagree, or what could not be read.
	Notes []string `json:"notes,omitempty"`

	facts release.Release
	known bool // facts is set
}

// DetectRunning finds the release a snapshot runs: from, when the user
// says (--from), else the version Karpenter's Deployment runs (its chart's
// version label or its image tag), else the known release whose CRDs state
// what the installed CRDs state. Files without any of them say nothing.
func DetectRunning(s *snapshot.Snapshot, from string) (Running, error) {
	var r Running
	crds := crdDetection(s)
	switch {
	case from != "":
		v, err := release.ParseVersion(from)
		if err != nil {
			return Running{}, fmt.Errorf("--from %q: not a Karpenter version; write it like v1.0.8", from)
		}
		if v.Patch < 0 {
			v.Patch = 0
		}
		r.Version, r.Source = v.String(), "--from"
	case len(s.Controllers) > 0:
		versions := map[string][]string{}
		for _, c := range s.Controllers {
			if c.Version != "" {
				versions[c.Version] = append(versions[c.Version], fmt.Sprintf("Deployment %s (%s)", c.Key(), c.From))
			}
		}
		var vs []string
		for v := range versions {
			vs = append(vs, v)
		}
		sort.Slice(vs, func(i, j int) bool {
			return release.MustParseVersion(vs[i]).Compare(release.MustParseVersion(vs[j])) < 0
		})
		if len(vs) > 0 {
			// Several controllers: the oldest bounds what must still work.
			r.Version, r.Source = vs[0], strings.Join(versions[vs[0]], ", ")
			if len(vs) > 1 {
				r.Notes = append(r.Notes, fmt.Sprintf("Karpenter Deployments run different releases: %s; preflight starts from the oldest", strings.Join(vs, ", ")))
			}
		}
	}
	if s.ControllersErr != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("Karpenter's Deployment could not be read (%v): the CRDs tell the release instead", s.ControllersErr))
	}
	if r.Version == "" && crds != nil {
		r.Version, r.Source = crds.Release.Version.String(), "CRDs installed"
		if !crds.Exact {
			r.Notes = append(r.Notes, fmt.Sprintf("the CRDs installed are no known release's exactly: %s's are the closest (they differ in %s)", crds.Release.Version, strings.Join(crds.Differences, ", ")))
		}
	}
	if r.Version == "" {
		r.Source = "nothing read says: no Karpenter Deployment or CRD (pass --from)"
		return r, nil
	}
	facts, _, err := release.Lookup(r.Version)
	if err != nil {
		r.Notes = append(r.Notes, err.Error())
		return r, nil
	}
	r.facts, r.known = facts, true
	if crds != nil && !strings.HasPrefix(r.Source, "CRDs") {
		if cv := crds.Release.Version; cv.MinorString() != release.MustParseVersion(r.Version).MinorString() {
			r.Notes = append(r.Notes, fmt.Sprintf("the CRDs installed are %s's (or closest to them), the controller %s's: an upgrade half done, or CRDs left behind", cv, r.Version))
		}
	}
	return r, nil
}

// crdDetection names the known release whose CRDs the snapshot's state, nil
// when it has no Karpenter CRD or they cannot be read.
func crdDetection(s *snapshot.Snapshot) *release.Detection {
	var crds []map[string]any
	for _, o := range append(append([]snapshot.Object(nil), s.CRDs...), s.OtherCRDs...) {
		crds = append(crds, o.Content)
	}
	if len(crds) == 0 {
		return nil
	}
	schema, err := release.SchemaFromCRDs(crds)
	if err != nil {
		return nil
	}
	d := release.Detect(schema)
	// The versions a CRD serves bound the release more surely than the
	// closest facts: a CRD serving v1beta1 is v1.0's at the latest. Among
	// the releases serving every version the CRDs serve, keep Detect's
	// choice when it is one of them, else the closest of them, with the
	// differences from that one (not from Detect's choice).
	var fits []release.Release
	for _, r := range release.Known() {
		if servesAll(r, s) {
			fits = append(fits, r)
		}
	}
	if len(fits) > 0 && !slices.ContainsFunc(fits, func(r release.Release) bool { return r.Version == d.Release.Version }) {
		d = release.DetectAmong(schema, fits)
	}
	return &d
}

// servesAll: r serves every version each of the snapshot's CRDs of its
// kinds serves.
func servesAll(r release.Release, s *snapshot.Snapshot) bool {
	for _, o := range append(append([]snapshot.Object(nil), s.CRDs...), s.OtherCRDs...) {
		for _, k := range r.Facts.Schema.Kinds {
			if k.Plural+"."+k.Group != o.Name() {
				continue
			}
			for _, v := range versionsOf(o).served {
				if !slices.Contains(k.Served, v) {
					return false
				}
			}
		}
	}
	return true
}
