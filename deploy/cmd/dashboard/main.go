// Command dashboard writes callbus's Grafana dashboard (deploy.Dashboard, built
// with grafana-foundation-sdk) to the chart, or to -o; `-o -` prints it for an
// import by hand. The chart's tests fail while the checked-in file is stale.
//
//	cd deploy && go run ./cmd/dashboard
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/callbus/callbus/deploy"
)

func main() {
	out := flag.String("o", deploy.DashboardFile, "file to write; - for standard output")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	b, err := deploy.Dashboard()
	if err != nil {
		return err
	}
	if out == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
