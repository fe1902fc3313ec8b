package budget

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"
)

// utcPrefix is what Karpenter prepends before parsing: budget schedules are
// UTC whatever zone the controller runs in.
const utcPrefix = "TZ=UTC "

// ParseSchedule parses a budget schedule exactly as Karpenter does: robfig/cron
// v3 ParseStandard on "TZ=UTC " + expr. Errors carry the parser's own text,
// which is what users find when they search for it.
func ParseSchedule(expr string) (s cron.Schedule, err error) {
	defer func() {
		// The parser is third-party code run on user input; a panic there must
		// become a finding, not a crashed webhook.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cron parser failed: %v", r)
		}
	}()
	return cron.ParseStandard(utcPrefix + expr)
}

// scheduleCRDPattern is the v1 CRD's schedule pattern. Its alternation is
// unanchored, so it admits nearly anything with five space-separated parts;
// matching it only means the API server accepts the object.
var scheduleCRDPattern = regexp.MustCompile(`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`)

// ScheduleAcceptedByAPIServer reports whether the CRD pattern admits expr.
func ScheduleAcceptedByAPIServer(expr string) bool { return scheduleCRDPattern.MatchString(expr) }

// cronField describes one of the five standard fields for ScheduleFix.
type cronField struct {
	min, max int
	names    []string // index = value, for month and day of week
}

var cronFields = [5]cronField{
	{min: 0, max: 59},
	{min: 0, max: 23},
	{min: 1, max: 31},
	{min: 1, max: 12, names: []string{"", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{min: 0, max: 6, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

const dayOfWeekField = 4

// ScheduleFix returns a corrected schedule for the mistakes users make most
// with Karpenter budgets, or "" when it knows none or expr already parses:
// wrap-around ranges such as "sat-sun" or "fri-mon" (robfig/cron wants the
// low end first) become lists, 7 for Sunday becomes 0, and a leading seconds
// field of 0 is dropped.
func ScheduleFix(expr string) string {
	if _, err := ParseSchedule(expr); err == nil {
		return ""
	}
	fields := strings.Fields(expr)
	changed := false
	if len(fields) == len(cronFields)+1 && fields[0] == "0" && !strings.ContainsAny(fields[5], "0123456789") {
		// A leading seconds field, as Quartz and Spring write. Only dropped
		// when day of week has no numbers: Quartz counts Sunday as 1.
		fields, changed = fields[1:], true
	}
	if len(fields) != len(cronFields) {
		return ""
	}
	for i, f := range fields {
		parts := strings.Split(f, ",")
		for j, p := range parts {
			if fixed, ok := fixPart(p, cronFields[i], i == dayOfWeekField); ok {
				parts[j] = fixed
				changed = true
			}
		}
		fields[i] = strings.Join(parts, ",")
	}
	if !changed {
		return ""
	}
	fixed := strings.Join(fields, " ")
	if _, err := ParseSchedule(fixed); err != nil {
		return ""
	}
	return fixed
}

// fixPart rewrites one comma-separated part of a field when it is a
// wrap-around range or (day of week) a 7.
func fixPart(part string, f cronField, dayOfWeek bool) (string, bool) {
	if strings.Contains(part, "/") {
		return "", false
	}
	lowHigh := strings.Split(part, "-")
	switch len(lowHigh) {
	case 1:
		if dayOfWeek && part == "7" {
			return "0", true
		}
		return "", false
	case 2:
	default:
		return "", false
	}
	low, lowName, ok1 := fieldValue(lowHigh[0], f)
	high, highName, ok2 := fieldValue(lowHigh[1], f)
	if !ok1 || !ok2 {
		return "", false
	}
	if dayOfWeek {
		days, ok := dayOfWeekList(low, high)
		if !ok {
			return "", false
		}
		var spelled []string
		for _, d := range days {
			if lowName || highName {
				spelled = append(spelled, f.names[d])
			} else {
				spelled = append(spelled, strconv.Itoa(d))
			}
		}
		return strings.Join(spelled, ","), true
	}
	if low <= high || low > f.max || high < f.min {
		return "", false
	}
	spell := func(v int, name bool) string {
		if name {
			return f.names[v]
		}
		return strconv.Itoa(v)
	}
	return spellRange(spell(low, lowName), spell(f.max, lowName)) + "," + spellRange(spell(f.min, highName), spell(high, highName)), true
}

func spellRange(low, high string) string {
	if low == high {
		return low
	}
	return low + "-" + high
}

// fieldValue reads a number or (case-insensitively) a name of field f. Day of
// week accepts 7 so that fixPart can map it to Sunday.
func fieldValue(s string, f cronField) (value int, isName bool, ok bool) {
	lower := strings.ToLower(s)
	for v, name := range f.names {
		if name != "" && name == lower {
			return v, true, true
		}
	}
	n, err := strconv.Atoi(s)
	sunday7 := f.max == 6 && n == 7
	if err != nil || n < f.min || (n > f.max && !sunday7) {
		return 0, false, false
	}
	return n, false, true
}

// dayOfWeekList lists the days of a day-of-week range that robfig/cron
// rejects: one that wraps past Saturday (fri-mon) or uses 7 for Sunday.
// ok is false for a range the parser already accepts.
func dayOfWeekList(low, high int) (days []int, ok bool) {
	sundayLow := low == 7
	if sundayLow {
		low = 0
	}
	if high == 7 {
		// low-7 means low through Saturday, then Sunday.
		for d := low; d <= 6; d++ {
			days = append(days, d)
		}
		if low != 0 {
			days = append(days, 0)
		}
		return days, true
	}
	if low <= high {
		if !sundayLow {
			return nil, false
		}
		for d := low; d <= high; d++ {
			days = append(days, d)
		}
		return days, true
	}
	for d := low; d != high; d = (d + 1) % 7 {
		days = append(days, d)
	}
	return append(days, high), true
}
