package budget

import "testing"

func TestParseScheduleKeepsTheParserText(t *testing.T) {
	tests := []struct {
		expr    string
		wantErr string // "" when valid
	}{
		{expr: "0 9 * * mon-fri"},
		{expr: "@daily"},
		{expr: "@hourly"},
		{expr: "*/15 22-23,0-2 * * sat,sun"},
		{expr: "0 9 * * sat-sun", wantErr: "beginning of range (6) beyond end of range (0): sat-sun"},
		{expr: "0 9 * * 7", wantErr: "end of range (7) above maximum (6): 7"},
		{expr: "0 0 9 * * *", wantErr: "expected exactly 5 fields, found 6: [0 0 9 * * *]"},
		{expr: "", wantErr: "expected exactly 5 fields, found 0: []"},
		{expr: "@dailyx", wantErr: "unrecognized descriptor: @dailyx"},
		{expr: "TZ=Europe/Paris 0 9 * * *", wantErr: "expected exactly 5 fields, found 6: [TZ=Europe/Paris 0 9 * * *]"},
		{expr: "*/0 * * * *", wantErr: "step of range should be a positive number: */0"},
		{expr: "0 9 L * *", wantErr: `failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := ParseSchedule(tt.expr)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ParseSchedule(%q) error: %v", tt.expr, err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Fatalf("ParseSchedule(%q) error = %v, want %q", tt.expr, err, tt.wantErr)
			}
		})
	}
}

func TestParseScheduleIsUTC(t *testing.T) {
	s, err := ParseSchedule("0 9 * * *")
	if err != nil {
		t.Fatal(err)
	}
	paris, err := timeLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	// 08:30 in Paris on a winter day is 07:30 UTC; the next hit is 09:00 UTC.
	from := instant(t, "2025-01-06T08:30:00+01:00").In(paris)
	if got, want := s.Next(from).UTC(), instant(t, "2025-01-06T09:00:00Z"); !got.Equal(want) {
		t.Errorf("Next(%s) = %s, want %s", from, got, want)
	}
}

func TestScheduleFix(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"0 9 * * sat-sun", "0 9 * * sat,sun"},
		{"0 9 * * SAT-SUN", "0 9 * * sat,sun"},
		{"0 9 * * fri-mon", "0 9 * * fri,sat,sun,mon"},
		{"0 9 * * 5-1", "0 9 * * 5,6,0,1"},
		{"0 9 * * 7", "0 9 * * 0"},
		{"0 9 * * 1,7", "0 9 * * 1,0"},
		{"0 9 * * 5-7", "0 9 * * 5,6,0"},
		{"0 9 * * 7-2", "0 9 * * 0,1,2"},
		{"0 9 * * sat-7", "0 9 * * sat,sun"},
		{"0 22-2 * * *", "0 22-23,0-2 * * *"},
		{"0 0 * nov-feb *", "0 0 * nov-dec,jan-feb *"},
		{"0 0 30-2 * *", "0 0 30-31,1-2 * *"},
		{"0 0 9 * * *", "0 9 * * *"},
		{"0 0 9 * * sat-sun", "0 9 * * sat,sun"},
		// No fix known, or nothing to fix.
		{"0 0 9 * * 1", ""},
		{"0 9 * * mon-fri", ""},
		{"0 9 * *", ""},
		{"TZ=Europe/Paris 0 9 * * *", ""},
		{"0 9 * * fri-mon/2", ""},
		{"61 * * * *", ""},
		{"0 9 * * 8", ""},
		{"@dailyx", ""},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got := ScheduleFix(tt.expr)
			if got != tt.want {
				t.Fatalf("ScheduleFix(%q) = %q, want %q", tt.expr, got, tt.want)
			}
			if got != "" {
				if _, err := ParseSchedule(got); err != nil {
					t.Fatalf("fix %q does not parse: %v", got, err)
				}
			}
		})
	}
}

func TestScheduleAcceptedByAPIServer(t *testing.T) {
	tests := []struct {
		expr string
		want bool
	}{
		{"0 9 * * sat-sun", true}, // the loose pattern lets the parser error through
		{"0 0 9 * * *", true},
		{"@daily", true},
		{"@dailyx", true}, // the alternation is not anchored at the end
		{"@every 5m", false},
		{"0 9 * *", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := ScheduleAcceptedByAPIServer(tt.expr); got != tt.want {
			t.Errorf("ScheduleAcceptedByAPIServer(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}
