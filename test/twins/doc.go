// Package twins holds the differential test of the rules' CEL twins
// (policies/twin): every object of the verdict corpus (test/corpus and
// test/e2e/testdata/verdicts), the rule fixtures (policies/testdata/rules),
// the examples and a fuzz target's objects goes, as a CREATE and as a few
// UPDATEs, through karpgate's validating webhook (the Rego rules) and
// through the ValidatingAdmissionPolicy the twins make, evaluated offline
// with the API server's own code (internal/admissionpolicy). For each twin,
// what the webhook denies, warns or audits must be what the policy's
// binding of that action says, message for message.
//
// Only what the API server would hand admission is compared: objects its
// CRD schema accepts, with the CRD's defaults, as it stores them; v1beta1
// objects as karpgate converts them to v1. The deliberate differences of
// the twins (docs/admission-policy.md) are named where a case meets them.
//
// make test judges a sample that exercises every twin (each twinned rule's
// fail fixture, testdata/twins.yaml and every 20th other object): each
// request evaluates every twin under three bindings, too slow under the
// race detector for the whole corpus. The whole corpus:
//
//	go test ./test/twins -run TestTwinsAgreeWithTheirRules -args -twins.all
package twins
