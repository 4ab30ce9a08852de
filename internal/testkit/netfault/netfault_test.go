package netfault

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the programs it runs inside the namespaces: an echo
// server (NETFAULT_ECHO=addr) and a client that sends a line and waits 2 s for it
// back (NETFAULT_PROBE=addr), exiting 0 when it came back.
func TestMain(m *testing.M) {
	if addr := os.Getenv("NETFAULT_ECHO"); addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			os.Exit(2)
		}
		fmt.Println("listening")
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(2)
			}
			go func() { _, _ = io.Copy(c, c) }()
		}
	}
	if addr := os.Getenv("NETFAULT_PROBE"); addr != "" {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			os.Exit(1)
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			os.Exit(1)
		}
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// echo starts the echo server in node and waits until it listens.
func echo(t *testing.T, node *Node) string {
	t.Helper()
	addr := node.Addr.String() + ":7000"
	cmd := node.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "NETFAULT_ECHO="+addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "listening\n" {
		t.Fatalf("echo server in %s did not start", node.Name)
	}
	return addr
}

// reaches reports whether a probe from node gets an echo back from addr, and
// how long it took.
func reaches(t *testing.T, node *Node, addr string) (bool, time.Duration) {
	t.Helper()
	cmd := node.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "NETFAULT_PROBE="+addr)
	start := time.Now()
	err := cmd.Run()
	if err != nil {
		if _, exit := err.(*exec.ExitError); !exit {
			t.Fatal(err)
		}
	}
	return err == nil, time.Since(start)
}

// TestFaults: cuts both ways and one way, heal, delay and flap between two
// namespaces, and nothing left of the run after Close.
func TestFaults(t *testing.T) {
	n := New(t)
	a, b := n.Add("a"), n.Add("b")
	addrB := echo(t, b)
	addrA := echo(t, a)
	if ok, _ := reaches(t, a, addrB); !ok {
		t.Fatal("a does not reach b before any fault")
	}

	n.Cut("a", "b")
	if ok, _ := reaches(t, a, addrB); ok {
		t.Error("a reaches b across a cut")
	}
	n.HealAll()
	if ok, _ := reaches(t, a, addrB); !ok {
		t.Error("a does not reach b after the heal")
	}

	// b's replies are dropped: a's connection attempt gets no SYN-ACK.
	n.CutOneWay("b", "a")
	if ok, _ := reaches(t, a, addrB); ok {
		t.Error("a got b's reply across a one-way cut b → a")
	}
	n.HealAll()

	n.Delay(150*time.Millisecond, 50*time.Millisecond, 1)
	ok, took := reaches(t, a, addrB)
	if !ok {
		t.Error("a does not reach b under delay")
	}
	// Connect and echo are two round trips, each at least 2 × 100 ms.
	if took < 400*time.Millisecond {
		t.Errorf("a probe under 150±50 ms delay took %s: the packets were not held", took)
	}
	n.HealAll()
	if ok, _ := reaches(t, b, addrA); !ok {
		t.Error("b does not reach a after the delay is healed")
	}

	f := n.Flap("a", "b", 100*time.Millisecond, 300*time.Millisecond, 1)
	deadline := time.Now().Add(30 * time.Second)
	for f.Downs() < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling the flap's counter
	}
	if f.Downs() < 3 {
		t.Errorf("the link went down %d times in 30 s", f.Downs())
	}
	n.HealAll()
	if ok, _ := reaches(t, a, addrB); !ok {
		t.Error("a does not reach b after the flap stopped")
	}

	n.Close()
	for _, name := range ownNames() {
		if strings.HasPrefix(name, n.run+"-") {
			t.Errorf("left after Close: %s", name)
		}
	}
}

// TestSweep: what a crashed run left (its pid gone) is removed; what a live run
// uses is kept.
func TestSweep(t *testing.T) {
	live := New(t) // skips (skipreport) where namespaces cannot be made
	live.Add("a")
	dead := 0x3ffff0 // above any pid this machine hands out (pid_max is at most 2^22)
	for processAlive(dead) {
		dead--
	}
	crashed := fmt.Sprintf("%s%x", Prefix, dead)
	t.Cleanup(func() { _ = removeRun(crashed) })
	for _, args := range [][]string{{"netns", "add", crashed + "-2"}, {"link", "add", crashed + "-br", "type", "bridge"}} {
		if err := ipCmd(args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := Sweep(); err != nil {
		t.Fatal(err)
	}
	var left, kept []string
	for _, name := range ownNames() {
		switch {
		case strings.HasPrefix(name, crashed+"-"):
			left = append(left, name)
		case strings.HasPrefix(name, live.run+"-"):
			kept = append(kept, name)
		}
	}
	if len(left) > 0 {
		t.Errorf("left after the sweep: %v", left)
	}
	if len(kept) < 3 { // the namespace, the bridge, the host's veth end
		t.Errorf("the sweep took a live run's names: kept only %v", kept)
	}
}
