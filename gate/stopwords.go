package gate

// Stop-word lists, stored as token hashes so membership never needs a string.

// qualityStopWords leave a query's words out of section quality's keywords:
// the original WikiGR code's list (105 words).
var qualityStopWords = []string{
	"a", "about", "after", "all", "an", "and", "any", "are", "article", "articles", "as", "at",
	"be", "been", "before", "being", "between", "both", "but", "by", "can", "could", "describe",
	"did", "do", "does", "each", "either", "explain", "few", "find", "for", "from", "graph", "had",
	"has", "have", "he", "her", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
	"knowledge", "may", "me", "might", "more", "most", "my", "neither", "no", "nor", "not", "of",
	"on", "or", "other", "our", "out", "related", "relationship", "shall", "she", "should", "so",
	"some", "such", "tell", "than", "that", "the", "their", "them", "then", "these", "they", "this",
	"those", "through", "to", "up", "us", "was", "we", "were", "what", "when", "where", "which",
	"who", "whom", "why", "will", "with", "would", "yet", "you", "your",
}

// coverageStopWords leave a query's words out of sufficiency coverage: the
// sufficient-context code's list.
var coverageStopWords = []string{
	"the", "and", "for", "are", "but", "not", "you", "all", "can", "had", "her", "was", "one",
	"our", "out", "has", "what", "how", "why", "when", "where", "which", "who",
}

var (
	qualityStopSet  = buildStopSet(qualityStopWords)
	coverageStopSet = buildStopSet(coverageStopWords)
)

func buildStopSet(words []string) *hashSet {
	s := &hashSet{}
	s.reset(len(words))
	for _, w := range words {
		s.add(hashString(w))
	}
	return s
}
