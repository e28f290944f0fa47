package gaps

// CheckGolden lets the package's external tests (gaps_test) share its
// golden files' -update.
var CheckGolden = checkGoldenFile
