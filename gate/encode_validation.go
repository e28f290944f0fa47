package gate

// AppendValidation appends the answer-validation JSON:
// {"soft_refusal":..,"cited":[..],"unknown":[..],"uncited_sentences":[..],"gap_event":..}.
// Lists are [] when empty and gap_event is null when there is none.
func AppendValidation(dst []byte, v *Validation) []byte {
	dst = append(dst, `{"soft_refusal":`...)
	dst = appendBool(dst, v.SoftRefusal)
	dst = append(dst, `,"cited":`...)
	dst = appendStrings(dst, v.Cited)
	dst = append(dst, `,"unknown":`...)
	dst = appendStrings(dst, v.Unknown)
	dst = append(dst, `,"uncited_sentences":`...)
	dst = appendStrings(dst, v.UncitedSentences)
	dst = append(dst, `,"gap_event":`...)
	dst = AppendGapEvent(dst, v.GapEvent)
	return append(dst, '}')
}
