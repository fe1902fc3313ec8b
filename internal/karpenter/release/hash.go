package release

import (
	"regexp"
	"strings"
)

// Hash is how a release hashes a kind to decide whether every node drifted:
// Karpenter stores the hash on each NodeClaim, and a NodeClaim whose hash no
// longer matches its NodePool's or EC2NodeClass's is drifted.
type Hash struct {
	// Version is the hash-version annotation value (karpenter.sh/
	// nodepool-hash-version, karpenter.k8s.aws/ec2nodeclass-hash-version).
	// When it changes between releases, the upgrade re-hashes: Karpenter
	// rewrites the NodeClaims' hashes rather than drift them.
	Version string `json:"version"`
	// Roots are the object's field paths hashed whole ("spec.template").
	Roots []string `json:"roots"`
	// Ignored are the paths under the roots tagged `hash:"ignore"`.
	Ignored []string `json:"ignored,omitempty"`
	// Inputs are what the hash reads besides the roots, such as the
	// resolved AMI family or the kubelet block as a string.
	Inputs []HashInput `json:"inputs,omitempty"`
	// Options of github.com/mitchellh/hashstructure/v2: lists compare as
	// sets, zero values as absent.
	SlicesAsSets    bool `json:"slicesAsSets"`
	IgnoreZeroValue bool `json:"ignoreZeroValue"`
	ZeroNil         bool `json:"zeroNil"`
}

// HashInput is one value a hash reads besides its roots.
type HashInput struct {
	// Expr is the Go expression, as Karpenter writes it.
	Expr string `json:"expr"`
	// Path is the object field it derives from ("spec.kubelet"), or ""
	// for a value from outside the object (the cluster's CA bundle).
	Path string `json:"path,omitempty"`
	// How says how the field is read: "as is", "resolved" (a method
	// computes it, such as the AMI family from the alias) or "as a string".
	How string `json:"how,omitempty"`
}

var index = regexp.MustCompile(`\[[^\]]*\]`)

// Drifts reports whether changing the field at path (dotted JSON names;
// list indexes such as [0] are ignored) changes the hash, so that every
// node drifts. how says through what: "" for a field hashed as is, or the
// HashInput's How.
func (h *Hash) Drifts(path string) (drifts bool, how string) {
	if h == nil {
		return false, ""
	}
	path = index.ReplaceAllString(path, "")
	for _, in := range h.Inputs {
		if in.Path != "" && within(path, in.Path) {
			return true, in.How
		}
	}
	for _, ig := range h.Ignored {
		if within(path, ig) {
			return false, ""
		}
	}
	for _, root := range h.Roots {
		if within(path, root) {
			return true, ""
		}
	}
	return false, ""
}

// within reports whether path is p or a field under it.
func within(path, p string) bool {
	return path == p || strings.HasPrefix(path, p+".")
}

// resolutionDrift names, for each per-node drift reason of the AWS provider,
// the EC2NodeClass field whose resolution it compares with the node's: the
// provider resolves the selector terms to AMIs, subnets, security groups,
// capacity reservations and placement groups, and a node whose own differs
// from what they resolve to now drifts.
var resolutionDrift = map[string]string{
	"AMIDrift":                 "spec.amiSelectorTerms",
	"SubnetDrift":              "spec.subnetSelectorTerms",
	"SecurityGroupDrift":       "spec.securityGroupSelectorTerms",
	"CapacityReservationDrift": "spec.capacityReservationSelectorTerms",
	"PlacementGroupDrift":      "spec.placementGroupSelector",
}

// ResolutionDrift maps each EC2NodeClass field the release drifts nodes by
// resolving ("spec.amiSelectorTerms") to its drift reason ("AMIDrift"):
// changing it drifts the nodes whose resolved value differs, not every node.
func (f Facts) ResolutionDrift() map[string]string {
	out := map[string]string{}
	for _, reason := range f.Code.DriftReasons {
		if field, ok := resolutionDrift[reason]; ok {
			out[field] = reason
		}
	}
	return out
}
