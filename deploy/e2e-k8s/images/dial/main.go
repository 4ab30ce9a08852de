// dial: the NetworkPolicy scenario's probe, run in a pod: dial ADDR... opens a TCP
// connection to each host:port (3 s each) and prints one line per address,
// "ADDR connected" or "ADDR blocked: <error>", then exits 0.
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	for _, addr := range os.Args[1:] {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err != nil {
			fmt.Printf("%s blocked: %v\n", addr, err)
			continue
		}
		_ = c.Close()
		fmt.Printf("%s connected\n", addr)
	}
}
