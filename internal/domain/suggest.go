package domain

import "strings"

// Suggest returns the candidate a mistyped name most likely meant: one that
// differs only in case, else the nearest within two edits; "" when none is
// that close. Refusals of names (a receiver, a parameter) offer it as "did
// you mean …?".
func Suggest(name string, candidates []string) string {
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToUpper(name), strings.ToUpper(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean is Suggest as the end of an error message: " (did you mean
// X?)", or "" when nothing is close.
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, in bytes: names are ASCII.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
