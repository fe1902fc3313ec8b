package report

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxNameLength is the longest object name the API server takes.
const maxNameLength = 253

// Name is the name of an object's report: karpgate-<kind>-<name>, kind in
// lower case; a name too long for that ends in a hash instead.
func Name(kind, name string) string {
	return shorten("karpgate-" + strings.ToLower(kind) + "-" + name)
}

// PartName is the name of an object's part-th report (counted from 1) when
// its results take more than one: Name for the first,
// karpgate-<kind>.<part>-<name> for the others. A dot right after the kind
// is in no Name, and the part number ends at the first dash, so no part
// of one object is named like another object's report.
func PartName(kind, name string, part int) string {
	if part <= 1 {
		return Name(kind, name)
	}
	return shorten("karpgate-" + strings.ToLower(kind) + "." + strconv.Itoa(part) + "-" + name)
}

// shorten keeps a name the API server takes: one too long keeps its start
// (and so its kind and part) and ends in a hash of the whole.
func shorten(n string) string {
	if len(n) <= maxNameLength {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	suffix := "-" + hex.EncodeToString(sum[:])[:16]
	return strings.TrimRight(n[:maxNameLength-len(suffix)], "-.") + suffix
}
