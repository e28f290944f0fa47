// Command guest opens a signed bundle inside a Wasm sandbox, the way the
// ctxgate guests do at configure time, and reports the result and the time
// per Open measured with the sandbox's own clock.
//
//	guest BUNDLE TRUST MODE N   ->  "ok <sha256 of the policy> <ns per Open>"
//	                            or  "error <field>: <message>"
//
// It uses os and time, which gate/bundle must not: this is a test harness,
// not a guest shipped to users.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate/bundle"
)

func main() {
	if len(os.Args) != 5 {
		fail("usage: guest BUNDLE TRUST MODE N")
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err.Error())
	}
	t, err := os.ReadFile(os.Args[2])
	if err != nil {
		fail(err.Error())
	}
	n, _ := strconv.Atoi(os.Args[4])
	if n < 1 {
		n = 1
	}
	mode, err := bundle.ParseMode(os.Args[3])
	if err != nil {
		fail("error " + err.Error())
	}
	trust, err := bundle.ParseTrust(t)
	if err != nil {
		fail("error " + err.Error())
	}
	var policy []byte
	start := time.Now()
	for i := 0; i < n; i++ {
		policy, err = bundle.Open(b, trust, mode)
		if err != nil {
			fail("error " + err.Error())
		}
	}
	ns := time.Since(start).Nanoseconds() / int64(n)
	sum := sha256.Sum256(policy)
	os.Stdout.WriteString("ok " + hex.EncodeToString(sum[:]) + " " + strconv.FormatInt(ns, 10) + "\n")
}

func fail(msg string) {
	os.Stdout.WriteString(msg + "\n")
	os.Exit(0)
}
