package acme.checks

test_passes if {
	1 + 1 == 2
}

test_fails if {
	1 + 1 == 3
}

test_errors if {
	x := to_number("not a number")
	x > 1
}
