#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Drive Debian's QEMU with -device vfio-pci through its qtest port.

Runs inside the test VM, in the clients tree.  Starts
qemu-system-x86_64 with the given host device (an edu bound to our
driver) assigned to it, stopped (-S: no guest code runs; Debian's QEMU
has no qtest accelerator), then acts as the nested machine's firmware
and driver through qtest commands:
  - reads the device's config space through ports 0xcf8/0xcfc: the
    vendor and device ids must be edu's, 0x11e81234;
  - programs BAR0 and turns on memory decode and bus mastering;
  - reads edu's identification register through the BAR (QEMU's
    mmap of our region) and checks the liveness register (~x);
  - writes a pattern into nested guest RAM, has the device DMA it to its
    buffer and back to another guest-physical address, and compares.
Every DMA goes through the container QEMU made: nested guest-physical
addresses are IOVAs that QEMU mapped onto its RAM with MAP_DMA.

With a second host device (--peer), both are assigned and the first
one's DMA engine writes into the second one's liveness register, at the
nested guest-physical address of its BAR0: peer-to-peer, which works
only when QEMU could map the peer's BAR mmap into the container.

With --vga, the device is a VGA card assigned with x-vga=on: its
legacy VGA registers and text memory, reached at their usual addresses
in the nested machine, are the card's (region 8 of the device fd).

With --reset, the nested machine is reset through QMP's system_reset,
as at a guest reboot (QEMU resets the assigned device: its FLR, or a
bus or slot reset), and the device is checked again.

Prints one "# " transcript line per step, QEMU's own stderr as
"# qemu: " lines, and "ok -"/"not ok -" lines; exit status 0 when all
passed.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

BAR0 = 0xE0000000       # in q35's 32-bit PCI hole
SLOT = 4                # the assigned device's slot on the nested bus 0
SRC = 0x00100000        # nested guest-physical, below edu's 28-bit mask
DST = 0x00200000
EDU_BUF = 0x40000       # edu's DMA buffer, as the device addresses it
# QEMU 7.2's edu refuses, with a hw_error that ends the whole (outer) VM,
# a transfer that ends exactly at the end of its 4 KiB buffer: stay short.
DMA_LEN = 2048
EDU_ID, EDU_LIVE = 0x00, 0x04
EDU_DMA_SRC, EDU_DMA_DST, EDU_DMA_CNT, EDU_DMA_CMD = 0x80, 0x88, 0x90, 0x98
DMA_START, DMA_TO_RAM = 0x1, 0x2
PEER_SLOT = 5
VGA_IDS = 0x11111234    # QEMU's standard VGA
VGA_SEQ_INDEX = 0x3C4
VGA_TEXT_SPARE = 0xB8000 + 80 * 25 * 2 + 64     # past the 80x25 screen
VGA_PATTERN = 0x1F411F42
# edu's DMA engine only drives 28 address bits: the peer's BAR must sit
# below 256 MiB, above the nested machine's 64 MiB of RAM.
PEER_BAR0 = 0x08000000
P2P_SRC = 0x00300000
P2P_BUF = EDU_BUF + 0x100
P2P_VALUE = 0x5A5AA5A5


class QTest:
    """QEMU's qtest protocol: one command line, one "OK ..." reply."""

    def __init__(self, conn):
        self.f = conn.makefile("rwb", buffering=0)
        self.slot = SLOT

    def cmd(self, line):
        self.f.write(line.encode() + b"\n")
        while True:
            reply = self.f.readline().decode().strip()
            if not reply:
                raise RuntimeError(f"qtest: QEMU closed the port after '{line}'")
            if reply.startswith("IRQ"):     # an interrupt line: not ours
                continue
            if not reply.startswith("OK"):
                raise RuntimeError(f"qtest: '{line}' -> '{reply}'")
            return reply[2:].strip()

    def cfg_addr(self, reg):
        return 0x80000000 | (self.slot << 11) | reg

    def cfg_readl(self, reg):
        self.cmd(f"outl 0xcf8 {self.cfg_addr(reg):#x}")
        return int(self.cmd("inl 0xcfc"), 16)

    def cfg_writel(self, reg, val):
        self.cmd(f"outl 0xcf8 {self.cfg_addr(reg):#x}")
        self.cmd(f"outl 0xcfc {val:#x}")

    def outb(self, port, val):
        self.cmd(f"outb {port:#x} {val:#x}")

    def inb(self, port):
        return int(self.cmd(f"inb {port:#x}"), 16)

    def readl(self, addr):
        return int(self.cmd(f"readl {addr:#x}"), 16)

    def writel(self, addr, val):
        self.cmd(f"writel {addr:#x} {val:#x}")

    def writeq(self, addr, val):
        self.cmd(f"writeq {addr:#x} {val:#x}")

    def read(self, addr, size):
        return bytes.fromhex(self.cmd(f"read {addr:#x} {size:#x}")[2:])

    def write(self, addr, data):
        self.cmd(f"write {addr:#x} {len(data):#x} 0x{data.hex()}")


def edu_dma(qt, src, dst, count, to_ram):
    qt.writeq(BAR0 + EDU_DMA_SRC, src)
    qt.writeq(BAR0 + EDU_DMA_DST, dst)
    qt.writeq(BAR0 + EDU_DMA_CNT, count)
    qt.writeq(BAR0 + EDU_DMA_CMD, DMA_START | (DMA_TO_RAM if to_ram else 0))
    # The outer edu runs the copy from a 100 ms timer of its own clock.
    end = time.monotonic() + 30
    while qt.readl(BAR0 + EDU_DMA_CMD) & DMA_START:
        if time.monotonic() > end:
            raise RuntimeError("edu DMA still busy after 30 s")
        time.sleep(0.05)


def relay_stderr(pipe):
    """QEMU's stderr as transcript lines, which the parity stage compares."""
    for line in iter(pipe.readline, b""):
        print("# qemu: " + line.decode(errors="replace").rstrip(), flush=True)


def peer_to_peer(qt, check):
    """The first device's DMA writes the peer's liveness register."""
    qt.slot = PEER_SLOT
    ids = qt.cfg_readl(0x00)
    qt.cfg_writel(0x10, PEER_BAR0)
    qt.cfg_writel(0x04, 0x0002)         # memory decode
    qt.slot = SLOT
    # What an earlier run left in the register (edu has no reset) must
    # not pass for the DMA's result: write another value through the BAR.
    qt.writel(PEER_BAR0 + EDU_LIVE, 0)
    before = qt.readl(PEER_BAR0 + EDU_LIVE)
    print(f"# peer config 0x00 = {ids:#010x}, BAR0 = {PEER_BAR0:#x}, "
          f"liveness {before:#010x} before the DMA")
    qt.write(P2P_SRC, P2P_VALUE.to_bytes(4, "little"))
    edu_dma(qt, P2P_SRC, P2P_BUF, 4, to_ram=False)
    edu_dma(qt, P2P_BUF, PEER_BAR0 + EDU_LIVE, 4, to_ram=True)
    live = qt.readl(PEER_BAR0 + EDU_LIVE)
    want = ~P2P_VALUE & 0xFFFFFFFF
    print(f"# DMA {P2P_VALUE:#x} -> peer BAR0 + {EDU_LIVE:#x}: "
          f"peer liveness {live:#010x}")
    check("p2p", ids == 0x11E81234 and before == 0xFFFFFFFF and
          live == want,
          f"peer liveness {live:#010x} after the DMA, want {want:#010x}")


def edu_checks(qt, check, tag=""):
    """Config, BAR0, ident/liveness and a DMA round trip of the device."""
    ids = qt.cfg_readl(0x00)
    print(f"# config 0x00 = {ids:#010x}")
    check("config-ids" + tag, ids == 0x11E81234, f"vendor/device {ids:#010x}")
    qt.cfg_writel(0x10, BAR0)
    bar = qt.cfg_readl(0x10) & ~0xF
    qt.cfg_writel(0x04, 0x0006)         # memory decode, bus master
    print(f"# BAR0 = {bar:#x}, command = {qt.cfg_readl(0x04) & 0xffff:#06x}")
    check("bar0" + tag, bar == BAR0, f"BAR0 reads back {bar:#x}")
    ident = qt.readl(BAR0 + EDU_ID)
    qt.writel(BAR0 + EDU_LIVE, 0x12345678)
    live = qt.readl(BAR0 + EDU_LIVE)
    print(f"# edu ident {ident:#010x}, liveness ~0x12345678 = {live:#010x}")
    check("edu-ident" + tag, ident & 0xFFFF == 0x00ED and
          live == (~0x12345678 & 0xFFFFFFFF),
          f"ident {ident:#010x}, liveness {live:#010x}")
    pattern = bytes((i * 7 + 3) & 0xFF for i in range(DMA_LEN))
    qt.write(SRC, pattern)
    qt.write(DST, bytes(DMA_LEN))
    edu_dma(qt, SRC, EDU_BUF, len(pattern), to_ram=False)
    edu_dma(qt, EDU_BUF, DST, len(pattern), to_ram=True)
    back = qt.read(DST, len(pattern))
    same = sum(a == b for a, b in zip(back, pattern))
    print(f"# DMA {SRC:#x} -> edu {EDU_BUF:#x} -> {DST:#x}: "
          f"{same} of {len(pattern)} bytes match, "
          f"first bytes {back[:8].hex()}")
    check("edu-dma" + tag, back == pattern,
          f"{same}/{len(pattern)} bytes came back through nested RAM")


def vga_checks(qt, check):
    """A VGA card given with x-vga=on: its legacy ranges in the nested
    machine are the card's (region 8 of the device fd)."""
    ids = qt.cfg_readl(0x00)
    check("config-ids", ids == VGA_IDS, f"vendor/device {ids:#010x}")
    qt.cfg_writel(0x04, 0x0003)         # I/O and memory decode
    back = []
    for idx in (0x02, 0x04):
        qt.outb(VGA_SEQ_INDEX, idx)
        back.append(qt.inb(VGA_SEQ_INDEX))
    print(f"# sequencer index reads {back}")
    check("vga-io", back == [0x02, 0x04],
          f"sequencer index read back {back}")
    qt.writel(VGA_TEXT_SPARE, VGA_PATTERN)
    got = qt.readl(VGA_TEXT_SPARE)
    print(f"# text memory {VGA_TEXT_SPARE:#x}: {got:#010x}")
    check("vga-mem", got == VGA_PATTERN,
          f"text memory reads {got:#010x} after {VGA_PATTERN:#010x}")


def system_reset(path):
    """The nested machine's reset, as a guest reboot asks for it (QMP)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(60)
        s.connect(path)
        f = s.makefile("rwb", buffering=0)
        f.readline()                    # the greeting
        for cmd in ("qmp_capabilities", "system_reset"):
            f.write(json.dumps({"execute": cmd}).encode() + b"\n")
            while True:
                reply = json.loads(f.readline())
                if "return" in reply:
                    break
                if "error" in reply:
                    raise RuntimeError(f"QMP {cmd}: {reply['error']}")
    # The reset runs in QEMU's main loop, after the reply.
    time.sleep(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qemu")
    ap.add_argument("host")
    ap.add_argument("--peer", help="a second device, for peer-to-peer")
    ap.add_argument("--reset", action="store_true",
                    help="reset the nested machine, then check again")
    ap.add_argument("--vga", action="store_true",
                    help="the device is a VGA card: x-vga=on, VGA checks")
    ap.add_argument("--name", default="qemu",
                    help="the checks' name: clients/NAME/...")
    opt = ap.parse_args()
    path = "/tmp/qtest.sock"
    qmp = "/tmp/qmp.sock"
    if os.path.exists(path):
        os.unlink(path)
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(path)
    lsock.listen(1)
    args = [opt.qemu, "-machine", "q35", "-accel", "tcg", "-S", "-m", "64M",
            "-nodefaults", "-display", "none", "-qtest", f"unix:{path}",
            "-qtest-log", "/dev/null",
            "-qmp", f"unix:{qmp},server=on,wait=off",
            "-device", f"vfio-pci,host={opt.host},addr={SLOT:#x}.0" +
            (",x-vga=on" if opt.vga else "")]
    if opt.peer:
        args += ["-device",
                 f"vfio-pci,host={opt.peer},addr={PEER_SLOT:#x}.0"]
    print("# " + " ".join(args), flush=True)
    proc = subprocess.Popen(args, stderr=subprocess.PIPE)
    relay = threading.Thread(target=relay_stderr, args=(proc.stderr,))
    relay.start()
    failed = 0

    def check(name, good, what):
        nonlocal failed
        print(f"{'ok' if good else 'not ok'} - clients/{opt.name}/{name}: "
              f"{what}", flush=True)
        failed += not good

    try:
        lsock.settimeout(1)
        for _ in range(120):
            try:
                conn, _ = lsock.accept()
                break
            except socket.timeout:
                if proc.poll() is not None:
                    raise RuntimeError(f"QEMU exited with {proc.returncode} "
                                       "before connecting to the qtest port")
        else:
            raise RuntimeError("QEMU did not connect to the qtest port in 120 s")
        qt = QTest(conn)
        if opt.vga:
            vga_checks(qt, check)
        else:
            edu_checks(qt, check)
        if opt.peer:
            peer_to_peer(qt, check)
        if opt.reset:
            print("# system_reset", flush=True)
            system_reset(qmp)
            edu_checks(qt, check, "-after-reset")
    except (OSError, RuntimeError, ValueError) as e:
        check("qtest", False, str(e))
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        relay.join()
        os.unlink(path)
    print(f"# QEMU exited with {proc.returncode}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
