// Command rallybench is the helper of bench/run.sh: it builds ledgers
// in-process through the real append path, writes a fast-import stream of
// a large random history, times whole processes (git rally, the git
// plumbing floor, git rev-parse) and prints the report with the bars.
//
//	rallybench build   -dir REPO -facts N [-seed S] [-max-batch B]
//	rallybench history -commits C -files F -blob-size B > stream
//	rallybench measure -dir REPO -scenario NAME -size LABEL -runs N -out FILE [-reset-packed]
//	rallybench report  -in FILE
//	rallybench house   -base DIR -new DIR -hello DIR -target SIZE:base|new:REPO ... [-runs N]   (issue 27: hot commands against a base binary)
//	rallybench writers -dir REPO [-bin git-rally] [-writers 8] [-each 200]   (concurrent appends, then checks)
//	rallybench clones  -dir WORK [-bin git-rally] [-clones 50] [-rounds 3] [-alone 20]   (clones syncing through one git daemon)
//	rallybench signab  -dir REPO [-bin git-rally] [-runs N]   (signed against unsigned claims)
//	rallybench slack   DURATION COMMAND [ARG...]   (executes COMMAND under that timer slack)
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "bulk":
		err = runBulk(os.Args[2:])
	case "history":
		err = runHistory(os.Args[2:])
	case "house":
		err = runHouse(os.Args[2:])
	case "measure":
		err = runMeasure(os.Args[2:])
	case "profile":
		err = runProfile(os.Args[2:])
	case "report":
		err = runReport(os.Args[2:])
	case "rusage":
		err = runRusage(os.Args[2:])
	case "writers":
		err = runWriters(os.Args[2:])
	case "clones":
		err = runClones(os.Args[2:])
	case "signab":
		err = runSignAB(os.Args[2:])
	case "slack":
		err = runSlack(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rallybench: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: rallybench build|history|measure|report [flags]")
	os.Exit(2)
}
