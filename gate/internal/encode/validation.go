package encode

// AppendValidation appends the answer-validation JSON:
// {"soft_refusal":..,"cited":[..],"unknown":[..],"uncited_sentences":[..],"gap_event":..}.
// Lists are [] when empty and gap_event is null when there is none.
func AppendValidation(dst []byte, v *Validation) []byte {
	if n := validationSizeHint(v); cap(dst)-len(dst) < n {
		// One allocation instead of a doubling per size: a large answer's
		// validation is megabytes, and each copy is garbage for TinyGo's
		// collector.
		dst = append(make([]byte, 0, len(dst)+n), dst...)
	}
	if v.SoftRefusal {
		dst = appendStrings(dst, `{"soft_refusal":true,"cited":`, v.Cited)
	} else {
		dst = appendStrings(dst, `{"soft_refusal":false,"cited":`, v.Cited)
	}
	dst = appendStrings(dst, `,"unknown":`, v.Unknown)
	dst = appendStrings(dst, `,"uncited_sentences":`, v.UncitedSentences)
	dst = append(dst, `,"gap_event":`...)
	dst = AppendGapEvent(dst, v.GapEvent)
	return append(dst, '}')
}

// validationSizeHint is the validation's JSON size when nothing needs
// escaping: the strings, their quotes and commas, the keys and a gap event.
func validationSizeHint(v *Validation) int {
	n := 160 + listSize(v.Cited) + listSize(v.Unknown) + listSize(v.UncitedSentences)
	if g := v.GapEvent; g != nil {
		n += 256 + len(g.Query) + 24*len(g.QueryEmbedding)
	}
	return n
}

func listSize(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s) + 3
	}
	return n
}
