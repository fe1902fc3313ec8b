package release

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Detection is the known release whose CRDs state what a CRD set states.
type Detection struct {
	Release Release
	// Exact: the release's CRDs state exactly the set's facts (several
	// patch releases may; the newest is named).
	Exact bool
	// Differences name the facts in which the set differs from Release's
	// CRDs when not Exact, such as "budgetReasons".
	Differences []string
}

// Detect finds the known release whose CRDs state the same facts as s. When
// none states them all (a release newer than karpgate, hand-edited CRDs),
// it names the release agreeing on the most facts, the newest on a tie. Only
// the facts s states take part: a set without an EC2NodeClass CRD matches on
// its NodePool alone.
func Detect(s SchemaFacts) Detection { return DetectAmong(s, Known()) }

// DetectAmong is Detect among releases (oldest first) only, for a caller
// that knows more than the facts say (the versions the CRDs serve): the
// differences it names are then those from the release it chose.
func DetectAmong(s SchemaFacts, releases []Release) Detection {
	best, bestScore := Detection{}, math.MinInt
	for _, r := range releases {
		diffs := differences(r.Facts.Schema, s)
		score := -len(diffs)
		if score >= bestScore {
			best, bestScore = Detection{Release: r, Exact: len(diffs) == 0, Differences: diffs}, score
		}
	}
	return best
}

// differences names the facts s states that differ from known's.
func differences(known, s SchemaFacts) []string {
	var diffs []string
	ks, ss := reflect.ValueOf(known), reflect.ValueOf(s)
	for i := range ss.NumField() {
		field := ss.Type().Field(i)
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		sv, kv := ss.Field(i), ks.Field(i)
		if field.Name == "Kinds" {
			if d := kindDifferences(known.Kinds, s.Kinds); d != "" {
				diffs = append(diffs, d)
			}
			continue
		}
		if sv.IsZero() && !stated(field.Name, s) {
			continue
		}
		if !reflect.DeepEqual(sv.Interface(), kv.Interface()) {
			diffs = append(diffs, name)
		}
	}
	return diffs
}

// stated reports whether a zero-valued fact is stated by s: a NodePool CRD
// states staticNodePools false; a set without one states nothing about it.
func stated(field string, s SchemaFacts) bool {
	if field == "StaticNodePools" {
		for _, k := range s.Kinds {
			if k.Group == coreGroup && k.Kind == "NodePool" {
				return true
			}
		}
	}
	return false
}

// kindDifferences compares the kinds s has with the known release's: the
// versions each serves, and the Karpenter kinds one has and not the other.
func kindDifferences(known, s []Kind) string {
	var diffs []string
	for _, k := range s {
		var match *Kind
		for i := range known {
			if known[i].Group == k.Group && known[i].Kind == k.Kind {
				match = &known[i]
			}
		}
		switch {
		case match == nil:
			diffs = append(diffs, fmt.Sprintf("%s.%s is new", k.Kind, k.Group))
		case !reflect.DeepEqual(match.Served, k.Served):
			diffs = append(diffs, fmt.Sprintf("%s serves %s", k.Kind, strings.Join(k.Served, ",")))
		}
	}
	for _, k := range known {
		if !hasGroupKind(s, k) && hasGroup(s, k.Group) {
			diffs = append(diffs, fmt.Sprintf("%s.%s is missing", k.Kind, k.Group))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return "kinds (" + strings.Join(diffs, "; ") + ")"
}

func hasGroupKind(ks []Kind, k Kind) bool {
	for _, c := range ks {
		if c.Group == k.Group && c.Kind == k.Kind {
			return true
		}
	}
	return false
}

func hasGroup(ks []Kind, group string) bool {
	for _, c := range ks {
		if c.Group == group {
			return true
		}
	}
	return false
}
