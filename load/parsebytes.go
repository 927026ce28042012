package load

// equalFold compares an ASCII header name with a lower-case one.
func equalFold(b []byte, lowerName string) bool {
	if len(b) != len(lowerName) {
		return false
	}
	for i := range b {
		if lower(b[i]) != lowerName[i] {
			return false
		}
	}
	return true
}

// containsFold reports whether the lower-case word occurs in b, ignoring ASCII case.
func containsFold(b []byte, word string) bool {
	for i := 0; i+len(word) <= len(b); i++ {
		if equalFold(b[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// matchWord sets *flag when word appears (case-insensitively) in the value, c being its next
// byte and *match the progress so far.
func matchWord(c byte, word string, match *int, flag *bool) {
	lc := lower(c)
	if lc == word[*match] {
		*match++
		if *match == len(word) {
			*flag = true
			*match = 0
		}
		return
	}
	*match = 0
	if lc == word[0] {
		*match = 1
	}
}

// matchPrefix sets *flag when the value, spaces before it aside, starts with word
// (case-insensitively), c being its next byte and *match the progress so far (past
// len(word): it does not).
func matchPrefix(c byte, word string, match *int, flag *bool) {
	switch {
	case *match >= len(word):
	case *match == 0 && (c == ' ' || c == '\t'):
	case lower(c) == word[*match]:
		*match++
		*flag = *flag || *match == len(word)
	default:
		*match = len(word) + 1
	}
}
