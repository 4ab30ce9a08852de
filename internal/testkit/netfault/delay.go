//go:build linux

package netfault

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Delay and reordering come from an NFQUEUE in each namespace rather than tc
// netem: kernels built without sch_netem (this project's CI machine is one) have
// NFQUEUE, and a packet held in the queue until its verdict is a packet delayed,
// released out of order when a later packet's delay is shorter. The queue is read
// over netfilter's netlink protocol by hand: no Go client of it is on the module
// proxy this project reaches.

// Netlink and nfnetlink_queue constants (linux/netfilter/nfnetlink_queue.h).
const (
	nfnlSubsysQueue    = 3
	nfqnlMsgPacket     = 0
	nfqnlMsgVerdict    = 1
	nfqnlMsgConfig     = 2
	nfqaCfgCmd         = 1
	nfqaCfgParams      = 2
	nfqaPacketHdr      = 1
	nfqaVerdictHdr     = 2
	nfqnlCfgCmdBind    = 1
	nfqnlCopyMeta      = 1
	nfAccept           = 1
	delayQueue         = 7 // the queue number: one per namespace, so any fixed one
	nlmsgHdrLen        = 16
	nfgenmsgLen        = 4
	nlmFRequestWithAck = unix.NLM_F_REQUEST | unix.NLM_F_ACK
)

// delayer is one namespace's queue reader.
type delayer struct {
	fd     int
	mean   time.Duration
	jitter time.Duration
	rng    *rand.Rand
	mu     sync.Mutex // rng, and writes on fd
	done   chan struct{}
}

// Delay holds every packet from every node to every other node for mean ±
// jitter (uniform), which reorders packets whose delays cross. HealAll ends it.
func (n *Net) Delay(mean, jitter time.Duration, seed uint64) {
	n.t.Helper()
	for i, node := range n.Nodes() {
		d, err := openDelayer(node.NS, mean, jitter, seed+uint64(i))
		if err != nil {
			n.t.Fatalf("netfault: delay in %s: %v", node.Name, err)
		}
		n.mu.Lock()
		n.delays = append(n.delays, d)
		n.mu.Unlock()
		for _, peer := range n.Nodes() {
			if peer != node {
				n.add(node.NS, rule{"-d", peer.Addr.String(), "-j", "NFQUEUE", "--queue-num", fmt.Sprint(delayQueue), "--queue-bypass"})
			}
		}
	}
	n.t.Logf("netfault: %s ± %s delay on every link", mean, jitter)
}

// stopDelays closes every queue (the rules were flushed first, so nothing new
// is queued; what the kernel still holds is accepted as its socket closes).
func (n *Net) stopDelays() {
	n.mu.Lock()
	ds := n.delays
	n.delays = nil
	n.mu.Unlock()
	for _, d := range ds {
		d.close()
	}
}

// openDelayer binds queue delayQueue in namespace ns and starts releasing its
// packets after their delays.
func openDelayer(ns string, mean, jitter time.Duration, seed uint64) (*delayer, error) {
	fd, err := socketIn(ns)
	if err != nil {
		return nil, err
	}
	d := &delayer{fd: fd, mean: mean, jitter: jitter, rng: rand.New(rand.NewPCG(seed, seed+1)), done: make(chan struct{})}
	cmd := make([]byte, 4)
	cmd[0] = nfqnlCfgCmdBind
	binary.BigEndian.PutUint16(cmd[2:], unix.AF_INET)
	params := make([]byte, 5)
	binary.BigEndian.PutUint32(params, 0xffff)
	params[4] = nfqnlCopyMeta
	for _, attr := range []struct {
		typ  uint16
		data []byte
	}{{nfqaCfgCmd, cmd}, {nfqaCfgParams, params}} {
		if err := d.send(nfqnlMsgConfig, unix.AF_INET, nlmFRequestWithAck, attr.typ, attr.data); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	// run checks for close between reads.
	tv := unix.NsecToTimeval((200 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	go d.run(fd)
	return d, nil
}

// socketIn opens a netfilter netlink socket inside namespace ns: the thread
// enters ns for the socket call only (a socket stays in the namespace it was
// made in).
func socketIn(ns string) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return -1, err
	}
	defer self.Close()
	target, err := os.Open(netnsDir + "/" + ns)
	if err != nil {
		return -1, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("setns %s: %w", ns, err)
	}
	fd, sockErr := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread is stuck in ns: let it die with the goroutine rather
		// than serve other goroutines there.
		runtime.Goexit()
	}
	if sockErr != nil {
		return -1, fmt.Errorf("netlink socket: %w", sockErr)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("netlink bind: %w", err)
	}
	return fd, nil
}

// send writes one nfnetlink message of msgType with one attribute.
func (d *delayer) send(msgType uint8, family uint8, flags uint16, attrType uint16, data []byte) error {
	attrLen := 4 + len(data)
	total := nlmsgHdrLen + nfgenmsgLen + (attrLen+3)&^3
	b := make([]byte, total)
	binary.NativeEndian.PutUint32(b[0:], uint32(total))
	binary.NativeEndian.PutUint16(b[4:], nfnlSubsysQueue<<8|uint16(msgType))
	binary.NativeEndian.PutUint16(b[6:], flags)
	b[16] = family
	binary.BigEndian.PutUint16(b[18:], delayQueue)
	binary.NativeEndian.PutUint16(b[20:], uint16(attrLen))
	binary.NativeEndian.PutUint16(b[22:], attrType)
	copy(b[24:], data)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return unix.EBADF
	}
	return unix.Sendto(d.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

// run reads queued packets and schedules each one's verdict (accept) after its
// delay, until the socket is closed.
func (d *delayer) run(fd int) {
	defer close(d.done)
	defer unix.Close(fd)
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if d.closed() {
			return
		}
		if err != nil {
			if err == unix.EINTR || err == unix.ENOBUFS || err == unix.EAGAIN {
				continue
			}
			return
		}
		for msg := buf[:n]; len(msg) >= nlmsgHdrLen; {
			l := int(binary.NativeEndian.Uint32(msg[0:]))
			if l < nlmsgHdrLen || l > len(msg) {
				break
			}
			typ := binary.NativeEndian.Uint16(msg[4:])
			if typ == nfnlSubsysQueue<<8|nfqnlMsgPacket {
				if id, ok := packetID(msg[nlmsgHdrLen+nfgenmsgLen : l]); ok {
					d.later(id)
				}
			}
			msg = msg[(l+3)&^3:]
		}
	}
}

// later accepts packet id after mean ± jitter.
func (d *delayer) later(id uint32) {
	d.mu.Lock()
	wait := d.mean
	if d.jitter > 0 {
		wait += time.Duration(d.rng.Int64N(int64(2*d.jitter)+1)) - d.jitter
	}
	d.mu.Unlock()
	time.AfterFunc(wait, func() {
		v := make([]byte, 8)
		binary.BigEndian.PutUint32(v, nfAccept)
		binary.BigEndian.PutUint32(v[4:], id)
		// An error is a closed queue: the kernel dropped the packet.
		_ = d.send(nfqnlMsgVerdict, unix.AF_UNSPEC, unix.NLM_F_REQUEST, nfqaVerdictHdr, v)
	})
}

// packetID finds NFQA_PACKET_HDR's packet id among a packet message's attributes.
func packetID(attrs []byte) (uint32, bool) {
	for len(attrs) >= 4 {
		l := int(binary.NativeEndian.Uint16(attrs[0:]))
		typ := binary.NativeEndian.Uint16(attrs[2:]) & 0x3fff
		if l < 4 || l > len(attrs) {
			return 0, false
		}
		if typ == nfqaPacketHdr && l >= 8 {
			return binary.BigEndian.Uint32(attrs[4:]), true
		}
		attrs = attrs[(l+3)&^3:]
	}
	return 0, false
}

// closed reports whether close was called.
func (d *delayer) closed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fd < 0
}

// close stops the reader, which closes the socket: the kernel drops what the
// queue still holds (lost packets, which TCP sends again), and, the rules being
// flushed first or --queue-bypass, nothing new waits for a reader.
func (d *delayer) close() {
	d.mu.Lock()
	d.fd = -1
	d.mu.Unlock()
	<-d.done
}
