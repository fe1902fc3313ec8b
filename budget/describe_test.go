package budget

import (
	"testing"
	"time"
)

// monday is the start of the two weeks described: Monday 3 June 2024.
var monday = time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)

// weekly repeats windows given as (day offset, start hour, length) over
// both weeks.
func weekly(spec ...[3]float64) []Window {
	var out []Window
	for w := 0; w < 2; w++ {
		for _, s := range spec {
			from := monday.AddDate(0, 0, 7*w+int(s[0])).Add(time.Duration(s[1] * float64(time.Hour)))
			out = append(out, Window{From: from, To: from.Add(time.Duration(s[2] * float64(time.Hour)))})
		}
	}
	return out
}

func TestDescribeWindows(t *testing.T) {
	hourly := func() []Window {
		var spec [][3]float64
		for d := 0; d < 7; d++ {
			for h := 0; h < 24; h += 2 {
				spec = append(spec, [3]float64{float64(d), float64(h), 1})
			}
		}
		return weekly(spec...)
	}
	tests := []struct {
		name string
		ws   []Window
		want string
	}{
		{"business days", weekly([3]float64{0, 9, 8}, [3]float64{1, 9, 8}, [3]float64{2, 9, 8}, [3]float64{3, 9, 8}, [3]float64{4, 9, 8}),
			"every week: Mon–Fri 09:00–17:00 (UTC)"},
		{"nights cross midnight", weekly([3]float64{0, 22, 8}, [3]float64{1, 22, 8}, [3]float64{2, 22, 8}),
			"every week: Mon–Wed 22:00–06:00 next day (UTC)"},
		{"until midnight", weekly([3]float64{5, 18, 6}),
			"every week: Sat 18:00–24:00 (UTC)"},
		{"weekend joins across the week boundary", append(
			[]Window{{From: monday, To: monday.Add(9 * time.Hour)}},
			append(weekly([3]float64{2, 12, 1})[:1], Window{From: monday.AddDate(0, 0, 5).Add(9 * time.Hour), To: monday.AddDate(0, 0, 7).Add(9 * time.Hour)},
				weekly([3]float64{2, 12, 1})[1], Window{From: monday.AddDate(0, 0, 12).Add(9 * time.Hour), To: monday.AddDate(0, 0, 14)})...),
			"every week: Wed 12:00–13:00 and Sat 09:00–Mon 09:00 (UTC)"},
		{"only in the first week", []Window{{From: monday.AddDate(0, 0, 2), To: monday.AddDate(0, 0, 2).Add(time.Hour)}},
			"in the week of Monday 2024-06-03: Wed 00:00–01:00 (UTC)"},
		{"too many to list", hourly(),
			"every week: Mon–Sun 00:00–01:00, Mon–Sun 02:00–03:00, Mon–Sun 04:00–05:00, Mon–Sun 06:00–07:00, Mon–Sun 08:00–09:00, Mon–Sun 10:00–11:00 and 6 more (UTC)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DescribeWindows(tt.ws, monday); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
