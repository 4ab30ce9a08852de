package netfault

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// ipCmd runs `ip args...`; its error carries ip's own message.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// iptables runs iptables with args inside the namespace ns (-w: wait for the
// xtables lock another run may hold).
func iptables(ns string, args ...string) error {
	full := append([]string{"--net=" + netnsDir + "/" + ns, "iptables", "-w"}, args...)
	out, err := exec.Command("nsenter", full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s in %s: %v: %s", strings.Join(args, " "), ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ownNames lists the namespaces and links whose name starts with Prefix.
func ownNames() []string {
	var names []string
	if entries, err := os.ReadDir(netnsDir); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), Prefix) {
				names = append(names, e.Name())
			}
		}
	}
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		return names
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "7: cbnf1a2b-h2@if3: <BROADCAST,..." : the name ends at '@' or ':'.
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
		if strings.HasPrefix(name, Prefix) {
			names = append(names, name)
		}
	}
	return names
}

// runOf is the run a name belongs to: Prefix and the pid in hex, up to the
// first '-'.
func runOf(name string) (string, bool) {
	run, _, ok := strings.Cut(name, "-")
	return run, ok && strings.HasPrefix(run, Prefix) && len(run) > len(Prefix)
}

// linkExists reports whether the host has a link named name.
func linkExists(name string) bool {
	return exec.Command("ip", "link", "show", "dev", name).Run() == nil
}

// processAlive reports whether a process with pid exists (signal 0).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// freeSubnet picks R for 10.246.R.0/24: the first that no address of the host
// uses yet (10.246.0.0/24 is left alone, as is every other range).
func freeSubnet() (byte, error) {
	out, err := exec.Command("ip", "-4", "-o", "addr", "show").Output()
	if err != nil {
		return 0, fmt.Errorf("ip addr show: %v", err)
	}
	used := string(out)
	for r := 1; r < 255; r++ {
		if !strings.Contains(used, fmt.Sprintf(" 10.246.%d.", r)) {
			return byte(r), nil
		}
	}
	return 0, errors.New("every /24 of 10.246.0.0/16 is in use (leftovers? see netfault.Sweep)")
}

// lockFile takes an exclusive lock on path (made if missing) and returns its
// release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
