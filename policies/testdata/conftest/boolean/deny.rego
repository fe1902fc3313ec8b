package main

# A boolean deny reports no message; conftest refuses it too.
deny if {
	input.kind == "NodePool"
}
