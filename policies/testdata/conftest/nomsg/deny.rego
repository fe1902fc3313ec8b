package main

deny contains {"message": "msg is misspelled"} if {
	input.kind == "NodePool"
}
