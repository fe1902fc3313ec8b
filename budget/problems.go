package budget

import "strings"

// ProblemKind says which part of the budgets a problem concerns, so that
// each lint rule reports its own kind.
type ProblemKind string

// The kinds of budget problems, one per field a rule reports on.
const (
	ProblemSchedule ProblemKind = "schedule"
	ProblemDuration ProblemKind = "duration"
	// ProblemPairing is a schedule without a duration or the reverse.
	ProblemPairing ProblemKind = "pairing"
	ProblemReasons ProblemKind = "reasons"
	ProblemNodes   ProblemKind = "nodes"
	// ProblemList is about the list or a budget as a whole (wrong types).
	ProblemList ProblemKind = "list"
)

// Problem is one thing wrong with a NodePool's budgets as written.
type Problem struct {
	Kind    ProblemKind
	Path    string
	Message string
	Fix     string
	Effect  Effect
}

// Problems lists what the API server of the newest Karpenter release would
// refuse in a NodePool's budgets, or what makes Karpenter block every
// reason at runtime, each classified by the field it concerns.
func Problems(pool map[string]any) []Problem {
	return ProblemsFor(Reasons, pool)
}

// ProblemsFor is Problems for a release whose budgets can name reasons.
func ProblemsFor(reasons []Reason, pool map[string]any) []Problem {
	budgets, err := FromNodePool(pool)
	if err != nil {
		// Wrong JSON types: each joined error reads "<path>: <message>".
		var out []Problem
		for _, line := range strings.Split(err.Error(), "\n") {
			path, msg, _ := strings.Cut(line, ": ")
			out = append(out, Problem{Kind: classify(path, false), Path: path, Message: msg, Effect: RejectedByAPIServer})
		}
		return out
	}
	var out []Problem
	for _, fe := range ValidateFor(reasons, budgets) {
		pairing := fe.Value == "" && (strings.HasSuffix(fe.Path, ".schedule") || strings.HasSuffix(fe.Path, ".duration")) && isPairingProblem(budgets, fe.Path)
		out = append(out, Problem{Kind: classify(fe.Path, pairing), Path: fe.Path, Message: fe.Problem, Fix: fe.QuotedReplacement(), Effect: fe.Effect})
	}
	return out
}

// isPairingProblem reports whether a problem at budgets[i].schedule or
// .duration is about the field being absent while its partner is set.
func isPairingProblem(budgets []Budget, path string) bool {
	for _, b := range budgets {
		switch path {
		case b.Path() + ".schedule":
			return b.Schedule == nil
		case b.Path() + ".duration":
			return b.Duration == nil
		}
	}
	return false
}

func classify(path string, pairing bool) ProblemKind {
	if pairing {
		return ProblemPairing
	}
	last := path[strings.LastIndex(path, ".")+1:]
	if i := strings.IndexByte(last, '['); i >= 0 {
		last = last[:i]
	}
	switch k := ProblemKind(last); k {
	case ProblemSchedule, ProblemDuration, ProblemReasons, ProblemNodes:
		return k
	}
	return ProblemList
}
