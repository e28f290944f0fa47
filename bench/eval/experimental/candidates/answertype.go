package candidates

import (
	"strings"
	"unicode"
)

// cues that a question asks for a number, a date or a quantity
var numCues = []string{
	// en
	"when", "what year", "which year", "how many", "how much", "how long", "how old", "how far", "how tall", "how big", "how large", "what date", "how often",
	// es
	"cuándo", "cuando", "cuántos", "cuántas", "cuánto", "cuánta", "qué año", "que año",
	// fr
	"quand", "combien", "quelle année", "en quelle année",
	// fi
	"milloin", "kuinka monta", "kuinka paljon", "montako", "minä vuonna", "kuinka vanha", "kuinka pitkä", "kuinka suuri", "paljonko",
	// id
	"kapan", "berapa", "tahun berapa",
	// sw
	"lini", "ngapi", "kiasi gani", "mwaka gani",
	// fa
	"چه زمانی", "چه سالی", "چند", "چقدر", "کی ",
	// hi
	"कब", "कितने", "कितना", "कितनी", "किस वर्ष", "किस साल",
	// te
	"ఎప్పుడు", "ఎన్ని", "ఎంత", "ఏ సంవత్సరం",
	// ko
	"언제", "몇", "얼마나", "어느 해",
}

func asksNumber(q string) bool {
	l := " " + strings.ToLower(q) + " "
	for _, c := range numCues {
		if strings.HasSuffix(c, " ") || !isLetterStart(c) {
			if strings.Contains(l, c) {
				return true
			}
			continue
		}
		// word-boundary-ish match for latin cues
		i := strings.Index(l, c)
		for i >= 0 {
			before := rune(l[i-1])
			after := l[i+len(c):]
			if !unicode.IsLetter(before) && (len(after) == 0 || !unicode.IsLetter(rune(after[0]))) {
				return true
			}
			j := strings.Index(l[i+1:], c)
			if j < 0 {
				break
			}
			i = i + 1 + j
		}
	}
	return false
}

func isLetterStart(c string) bool {
	for _, r := range c {
		return r < 0x80
	}
	return false
}

func hasDigit(toks []tok) bool {
	for _, t := range toks {
		for _, r := range t.s {
			if unicode.IsDigit(r) {
				return true
			}
			break
		}
	}
	return false
}
