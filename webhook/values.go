package webhook

// ValueCount is an upper bound on the values a JSON body holds: each
// array element and object member, and the top-level value. A decoder
// spends memory per value as well as per byte (an interface, a map entry,
// a policy engine term), so a body of a million one-byte elements costs
// several times what its size says; Route.MemoryPerValue charges it.
// It counts, outside strings, the commas and the opening brackets (an
// empty container counts one value it does not have), in one pass
// without allocating; on invalid JSON it still returns a count, which the
// decoder then refuses to make sense of.
func ValueCount(body []byte) int64 {
	n := int64(1)
	inString, escaped := false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',', c == '[', c == '{':
			n++
		}
	}
	return n
}
