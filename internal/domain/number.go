package domain

import "strconv"

// ParseWholeNumber reads a whole number as an operator or a client writes
// it: decimal digits only, without a sign, spaces or leading zeros ("0"
// itself is a number). Lenient forms such as " 2", "+3" or "03" are not
// numbers here: a value that changes how the engine works is read exactly
// as written or refused.
func ParseWholeNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
