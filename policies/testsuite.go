package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// TestSuite is the built-in rules and the --policy folders with their
// _test.rego files, and the --data folders: what `karpgate verify` runs
// the Rego unit tests of (policies/verify). It is loaded and compiled as
// New loads and compiles the rules, so that a test sees the rules, the
// restrictions and the builtins the engine would.
type TestSuite struct {
	// Modules are the parsed files by name. The test runner may rename
	// test rules in them before Compile, which compiles them as they are
	// then.
	Modules map[string]*ast.Module
	set     *policySet
}

// LoadTestSuite reads the built-in rules, the policy folders and the data
// folders, tests included.
func LoadTestSuite(policyDirs, dataDirs []string) (*TestSuite, error) {
	set, err := loadPolicySet(policyDirs, dataDirs, true)
	if err != nil {
		return nil, err
	}
	return &TestSuite{Modules: set.modules, set: set}, nil
}

// Compile compiles the suite with karpgate's restrictions and returns
// what a test's query is evaluated with: the compiler, a store holding the
// data folders and cfg as data.karpgate.config, and karpgate's builtins,
// which share one cache across the suite's queries.
func (s *TestSuite) Compile(cfg *config.Config) ([]func(*rego.Rego), error) {
	compiler, err := sandbox.Compile(s.Modules, budgetfuncs.Declarations())
	if err != nil {
		return nil, err
	}
	store, _, err := newStore(s.set, cfg, nil, release.ForRelease(release.Newest(), true, "linked CRDs"))
	if err != nil {
		return nil, err
	}
	return append([]func(*rego.Rego){rego.Compiler(compiler), rego.Store(store)}, budgetfuncs.RegoOptions(budgetfuncs.NewCache())...), nil
}
