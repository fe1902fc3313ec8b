package serve

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/karpgate/karpgate/webhook"
	"github.com/karpgate/karpgate/webhook/admission"
	conversionwebhook "github.com/karpgate/karpgate/webhook/conversion"
)

// The shares of the container's memory limit; "Staying up" in
// docs/operations.md works them through for the default 512Mi.
const (
	// heapPercent of the limit becomes GOMEMLIMIT: the Go runtime collects
	// harder as the heap nears it, and the rest covers what the heap limit
	// does not count precisely (stacks, fragmentation, the binary).
	heapPercent = 85
	// baseReserve is the heap karpgate needs besides request bodies: what
	// it holds idle (compiled policies, the disruption loop's trimmed caches
	// for a few thousand nodes, client and TLS state: about 60 MiB) and the
	// policy evaluations running at once (twice GOMAXPROCS of them, each
	// bounded by sandbox.Limits). What is left of the heap limit is the
	// budget requests share.
	baseReserve = 128 << 20
	// DefaultPolicyCheckMemory is what the child process that checks new
	// policies may hold (--policy-check-memory): it runs beside the serving
	// process in the same container, so its share comes off the limit
	// before the heap's. The built-in rules take about 30 MiB.
	DefaultPolicyCheckMemory = 64 << 20
)

// memoryPlan is how serve divides the memory limit.
type memoryPlan struct {
	// heapLimit is set as GOMEMLIMIT; 0 leaves the runtime's as it is.
	heapLimit int64
	// requestBudget is shared by the admission requests in flight
	// (webhook.Limits.MemoryBudget).
	requestBudget int64
	// conversionBudget is the conversion requests' own (webhook.Budget):
	// one review at the body limit, so that neither kind of request can
	// take the memory the other needs.
	conversionBudget int64
}

// conversionSlots are the conversion requests handled at once. The API
// server sends one review per read of a list or object at another
// version; they are few and large.
const conversionSlots = 16

// planMemory sizes the heap limit and the request budget from the
// container's limit, after the share of the child process that checks new
// policies (checkMemory), which runs in the same container. An explicit
// GOMEMLIMIT wins over the heap share. The largest request a route accepts
// must fit the budget: otherwise the limit is too small, which is said at
// start-up rather than by the OOM killer.
func planMemory(limit, checkMemory, maxAdmissionBytes int64, explicitGOMEMLIMIT bool) (memoryPlan, error) {
	conversion := int64(conversionwebhook.DefaultMaxRequestBytes * conversionwebhook.MemoryFactor)
	admissionNeed := maxAdmissionBytes * admission.MemoryFactor
	if limit <= 0 {
		return memoryPlan{requestBudget: max(webhook.DefaultMemoryBudget-conversion, admissionNeed), conversionBudget: conversion}, nil
	}
	plan := memoryPlan{heapLimit: max(limit-checkMemory, 0) * heapPercent / 100, conversionBudget: conversion}
	heap := plan.heapLimit
	if explicitGOMEMLIMIT {
		plan.heapLimit = 0
		heap = min(limit-checkMemory, debug.SetMemoryLimit(-1))
	}
	plan.requestBudget = heap - baseReserve - conversion
	if plan.requestBudget < admissionNeed {
		return plan, fmt.Errorf("--memory-limit %dMiB leaves %dMiB of heap for admission requests (after %dMiB for the policy check, --policy-check-memory, and %dMiB for one %dMiB conversion review), and one at the body limit needs %dMiB (a %dMiB admission review with --max-request-bytes): give the container at least %dMiB",
			limit>>20, max(plan.requestBudget, 0)>>20, checkMemory>>20, conversion>>20, conversionwebhook.DefaultMaxRequestBytes>>20, admissionNeed>>20, maxAdmissionBytes>>20, ((admissionNeed+conversion+baseReserve)*100/heapPercent+checkMemory)>>20+1)
	}
	return plan, nil
}

// apply sets the heap limit.
func (p memoryPlan) apply() {
	if p.heapLimit > 0 {
		debug.SetMemoryLimit(p.heapLimit)
	}
}

// explicitGOMEMLIMIT reports whether the environment set GOMEMLIMIT, which
// then wins over the share of --memory-limit.
func explicitGOMEMLIMIT() bool {
	_, set := os.LookupEnv("GOMEMLIMIT")
	return set
}
