package experiment

import (
	"fmt"
	"strconv"
	"strings"
)

// Suggest returns the candidate a mistyped word most likely meant, or ""
// when none is close: the same name in other letter case, the only
// candidate the word begins (at least 3 letters), or the nearest within a
// small edit distance (optimal string alignment: a swap of two neighbours
// counts once, as in "rnu" for "run"). The distance allowed grows with the
// word: 1 up to 4 letters, 2 beyond, so that "eta" does not suggest "eps".
func Suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	if w == "" {
		return ""
	}
	for _, c := range candidates {
		if strings.ToLower(c) == w {
			return c
		}
	}
	var prefixed []string
	for _, c := range candidates {
		if len(w) >= 3 && strings.HasPrefix(strings.ToLower(c), w) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	limit := 1
	if len([]rune(w)) > 4 {
		limit = 2
	}
	best, bestD, ties := "", limit+1, 0
	for _, c := range candidates {
		switch d := editDistance(w, strings.ToLower(c)); {
		case d < bestD:
			best, bestD, ties = c, d, 1
		case d == bestD:
			ties++
		}
	}
	if ties != 1 { // two names equally near: guessing would mislead
		return ""
	}
	return best
}

// DidYouMean is ` (did you mean "x"?)` for Suggest's answer, or "": it
// follows the mistyped word in a message.
func DidYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent letters.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// numberHint guesses the number meant by a value that does not parse: a
// decimal comma ("0,1" → "0.1") or digit grouping ("1,000" or "1_000" →
// "1000" where a whole number is wanted, "1e3" → "1000"). It returns ""
// when it has no guess.
func numberHint(v string, whole bool) string {
	if whole {
		plain := strings.NewReplacer(",", "", "_", "", "'", "").Replace(v)
		if _, err := strconv.Atoi(plain); err == nil && plain != v {
			return plain
		}
		if x, err := strconv.ParseFloat(v, 64); err == nil && x == float64(int64(x)) && x >= -1e15 && x <= 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return ""
	}
	if strings.Count(v, ",") == 1 && !strings.Contains(v, ".") {
		dotted := strings.Replace(v, ",", ".", 1)
		if _, err := strconv.ParseFloat(dotted, 64); err == nil {
			return dotted
		}
	}
	if plain := strings.NewReplacer("_", "", "'", "").Replace(v); plain != v {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return plain
		}
	}
	return ""
}
