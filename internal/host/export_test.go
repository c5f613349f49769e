package host

// DecodeFast is the hand-written reader alone, for tests.
func DecodeFast(b []byte, h *Host) bool { return decodeFast(b, h) }
