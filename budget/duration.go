package budget

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// durationCRDPattern is the v1 CRD's duration pattern: hours and/or minutes,
// with the trailing "0s" that time.Duration.String() adds.
var durationCRDPattern = regexp.MustCompile(`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`)

// ParseDuration parses a budget duration, accepting exactly what the CRD
// pattern accepts (8h, 90m, 1h30m, 8h0m0s). Errors say what is wrong and
// what to write instead.
func ParseDuration(s string) (time.Duration, error) {
	if !durationCRDPattern.MatchString(s) {
		return 0, fmt.Errorf("%s", durationProblem(s))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is too long to be a duration; budgets repeat with their schedule, so use at most the schedule's period", s)
	}
	return d, nil
}

var (
	daysPattern     = regexp.MustCompile(`^([0-9]+)d$`)
	fractionPattern = regexp.MustCompile(`[0-9]\.[0-9]`)
	secondsPattern  = regexp.MustCompile(`[0-9]+(s|ms|us|µs|ns)`)
)

// durationProblem explains why s does not match the CRD pattern.
func durationProblem(s string) string {
	const want = "write hours and minutes such as 8h, 90m or 1h30m"
	switch {
	case s == "":
		return "empty duration; " + want
	case strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t"):
		return fmt.Sprintf("%q contains spaces; %s", s, want)
	case strings.HasPrefix(s, "-"):
		return fmt.Sprintf("%q is negative; %s", s, want)
	case strings.HasPrefix(s, "P") || strings.HasPrefix(s, "p"):
		return fmt.Sprintf("%q is an ISO 8601 duration; %s", s, want)
	}
	if m := daysPattern.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil {
			return fmt.Sprintf("%q: days are not allowed; write %dh", s, n*24)
		}
	}
	if strings.ContainsAny(s, "dDwWyY") {
		return fmt.Sprintf("%q: days, weeks and years are not allowed; %s", s, want)
	}
	if strings.ContainsAny(s, "HM") {
		return fmt.Sprintf("%q: units are lower case; write %s", s, strings.ToLower(s))
	}
	if fractionPattern.MatchString(s) {
		return fmt.Sprintf("%q: fractions are not allowed; %s", s, want)
	}
	if loc := secondsPattern.FindStringIndex(s); loc != nil && s[loc[0]:] != "0s" {
		return fmt.Sprintf("%q: seconds are not allowed (budgets follow cron, which works in minutes; only a trailing 0s as in 8h0m0s is accepted); %s", s, want)
	}
	if _, err := strconv.Atoi(s); err == nil {
		return fmt.Sprintf("%q has no unit; write %sh or %sm", s, s, s)
	}
	if strings.Index(s, "m") < strings.Index(s, "h") {
		return fmt.Sprintf("%q: hours come before minutes; %s", s, want)
	}
	return fmt.Sprintf("%q is not a budget duration; %s", s, want)
}
