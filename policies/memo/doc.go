// Package memo lets the policy engine evaluate a rule once per distinct
// value of what it reads, rather than once per object. Most of a
// repository's NodePools share their budgets and most EC2NodeClasses their
// AMI selection, and an admission webhook sees the same objects again and
// again, so most evaluations find what an earlier one found.
//
// It reads the compiled rules to find each one's footprint, the fields of
// input it reads (footprint.go, reader.go); groups the rules whose
// footprint leaves out what tells objects apart (Groups); and remembers
// what each group found per reduced input (Memo), keyed from the request's
// Go values so that a remembered evaluation never converts the object to
// Rego's representation. It also says which rules read input.inventory
// (ReadsInventory), which are evaluated apart and never memoized.
//
// The engine (the policies package) decides which rules may be memoized
// and evaluates a group's query on a miss; this package decides what a
// group's rules may be keyed by, and that is all it must get right: a key
// shared by inputs the rules would judge differently hands one object's
// findings to another.
package memo
