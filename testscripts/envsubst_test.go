package testscripts

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdEnvsubst copies a file with $VAR and ${VAR} replaced from the
// script's environment, for recorded payloads that carry absolute paths:
//
//	envsubst payload.json.in payload.json
func cmdEnvsubst(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envsubst <in> <out>")
	}
	data := ts.ReadFile(args[0])
	out := os.Expand(data, ts.Getenv)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o666))
}
