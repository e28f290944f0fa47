// Command baseline does what guest does minus signature verification: it
// parses the bundle and canonicalizes its policy with gate/jsonx only. The
// size difference between the two modules is what gate/bundle and circl add.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

func main() {
	if len(os.Args) != 5 {
		os.Stdout.WriteString("usage: baseline BUNDLE TRUST MODE N\n")
		return
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		os.Stdout.WriteString(err.Error() + "\n")
		return
	}
	n, _ := strconv.Atoi(os.Args[4])
	if n < 1 {
		n = 1
	}
	var policy []byte
	start := time.Now()
	for i := 0; i < n; i++ {
		v, err := jsonx.Parse(b, 64)
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			return
		}
		policy = jsonx.AppendCanonical(policy[:0], v.Get("policy"))
	}
	ns := time.Since(start).Nanoseconds() / int64(n)
	sum := sha256.Sum256(policy)
	os.Stdout.WriteString("ok " + hex.EncodeToString(sum[:]) + " " + strconv.FormatInt(ns, 10) + "\n")
}
