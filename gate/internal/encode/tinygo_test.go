package encode

// Under tinygo test (scripts/test-tinygo.sh) the tests start in "/", not in
// this directory; testenv moves them here so relative paths resolve.
import _ "github.com/ctxgate/ctxgate/internal/testenv"
