//go:build tinygo

package testenv

import "os"

func init() {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		return
	}
	if err := os.Chdir(dir); err != nil {
		// Every path the tests read would be wrong; say why at once.
		panic("testenv: chdir " + dir + ": " + err.Error())
	}
}
