#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot the test VM, watch its two serial lines, judge the run.

The QEMU command comes from a machine profile of tests/vm/machines.toml
(--machine), the guest kernel and initramfs, extra kernel arguments and
ad hoc QEMU arguments; --print-args prints it, one argument per line,
and boots nothing.

ttyS0 (QEMU's stdout) carries the kernel console, ttyS1 (a unix socket)
carries /init's and the test programs' output (see tests/vm/init.sh).
This script:
  - prints every vt line ("ok -", "not ok -", "skip -") of ttyS1, or in
    --mode run every ttyS1 line;
  - sends each "VT-HOST <command>" line to the QEMU monitor;
  - kills the VM when it is silent for too long, runs past the total
    time, or a program outlives its time;
  - boots it once more when it went silent because the emulator
    stopped its clock (clock_stopped() says how that is told from a
    hung guest); the second boot's lines that the first printed are
    not printed again;
  - fails the run when the kernel log shows a warning, oops or lockup,
    a program did not finish, or the VM ended before VT-SUITE-END;
  - writes the merged log (both lines, in arrival order) to --log and
    ends with "N passed, N failed, N skipped".
Exit status 0 only when nothing failed (and, in --mode run, the command
exited 0).
"""

import argparse
import collections
import os
import re
import selectors
import shlex
import socket
import subprocess
import sys
import time
import tomllib

KERNEL_PROBLEMS = re.compile(
    r"WARNING:|BUG:|Oops|general protection|soft lockup|hard LOCKUP|"
    r"hung_task|blocked for more than|Kernel panic")
VT_LINE = re.compile(r"^(ok|not ok|skip) - ")
REPORT_LINES = 60       # of the first kernel report, printed on failure
KERNEL_TIME = re.compile(r"^\[\s*(\d+\.\d+)\]")
X86_EFLAGS_IF = 0x200
# A guest clock this far behind ours had stopped, however long the guest
# was silent on purpose before (see clock_stopped()).
CLOCK_STOPPED_LAG = 60
# The lines of "info lapic N" worth a log line: the timer, the in-service
# and pending vectors, the priorities.
APIC_FIELDS = ("LVTT", "Timer", "ISR", "IRR", "APR")


class Monitor:
    """The QEMU human monitor on a unix socket, one command at a time."""

    def __init__(self, path):
        self.path = path
        self.sock = None

    def _read_prompt(self, timeout):
        data = b""
        end = time.monotonic() + timeout
        while not data.endswith(b"(qemu) ") and time.monotonic() < end:
            self.sock.settimeout(max(0.1, end - time.monotonic()))
            try:
                chunk = self.sock.recv(4096)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace")

    def command(self, cmd):
        if self.sock is None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(self.path)
            self._read_prompt(5)
        self.sock.sendall(cmd.encode() + b"\n")
        reply = self._read_prompt(10)
        # The monitor echoes the command line; keep only what it said.
        lines = [l.strip() for l in reply.replace("\r", "").split("\n")]
        return " | ".join(l for l in lines
                          if l and l != "(qemu)" and cmd not in l)


MACHINES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "machines.toml")
# Profile keys that replace the base's value, with their QEMU option.
SCALARS = {"accel": "-accel", "machine": "-machine", "cpu": "-cpu",
           "memory": "-m", "smp": "-smp", "iommu": "-device"}


def load_machine(path, name):
    """The profile NAME with its bases folded in (machines.toml says how)."""
    with open(path, "rb") as f:
        profiles = tomllib.load(f)
    chain = []
    while name is not None:
        if name not in profiles:
            raise ValueError(f"no machine '{name}' in {path} (have: "
                             f"{', '.join(sorted(profiles))})")
        if any(name == n for n, _ in chain):
            raise ValueError(f"machine '{name}' is its own base in {path}")
        chain.append((name, profiles[name]))
        name = profiles[name].get("base")
    m = {"devices": [], "args": [], "append": []}
    for name, p in reversed(chain):
        for key, value in p.items():
            if key in ("devices", "args"):
                m[key] += value
            elif key == "append":
                m[key].append(value)
            elif key in SCALARS:
                m[key] = value
            elif key != "base":
                raise ValueError(f"machine '{name}': unknown key '{key}'")
    return m


def qemu_command(m, kernel=None, initrd=None, append=(), extra=()):
    cmd = ["qemu-system-x86_64"]
    for key, opt in SCALARS.items():
        if key in m:
            cmd += [opt, str(m[key])]
    cmd += m["args"]
    for dev in m["devices"]:
        cmd += ["-device", dev]
    if kernel:
        cmd += ["-kernel", kernel]
        if initrd:
            cmd += ["-initrd", initrd]
        cmd += ["-append", " ".join(m["append"] + list(append))]
    return cmd + list(extra)


def connect_serial(path, proc, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return None
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except OSError:
            s.close()
            time.sleep(0.05)
    return None


class Results:
    """The vt lines printed so far, and their count.

    A second boot replays the suite from the start: its lines that the
    first boot already printed are not printed or counted again, so a
    case counts once whichever boot ran it, and a case that failed in
    either boot stays failed.
    """

    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.earlier = collections.Counter()   # lines of earlier boots
        self.now = collections.Counter()       # lines of this boot

    def next_boot(self):
        self.earlier += self.now
        self.now = collections.Counter()

    def add(self, line):
        self.now[line] += 1
        if self.earlier[line] >= self.now[line]:
            return
        print(line, flush=True)
        if line.startswith("not ok"):
            self.failed += 1
        elif line.startswith("ok"):
            self.passed += 1
        else:
            self.skipped += 1


def out(line):
    print(line, flush=True)


def clock_stopped(regs, lag, silence):
    """Why a guest silent for SILENCE seconds is the emulator's fault, or
    None.

    Every vCPU with interrupts enabled (REGS: the monitor's "info
    registers -a"), halted or running, and the guest's own clock (its
    printk time when the NMI came) LAG seconds behind ours, over half the
    silence or over CLOCK_STOPPED_LAG (a program quiet on purpose for long
    may freeze late in its silence): no timer interrupt reached the guest
    any more, though every CPU would take one.  A guest task hung on a lock or a completion
    leaves the vCPUs the same, but its clock goes on: the TSC runs with
    the host's, and should the guest find it unstable, its ticks still
    come at least once per clocksource max_idle_ns (19 s for the HPET,
    the shortest here; the silence is 180 s or more).  A CPU spinning
    with interrupts off stops the ticks too, and is the guest's fault.
    """
    cpus = re.findall(r"[RE]FL=([0-9a-f]+)[^|]*?HLT=(\d)", regs)
    if not cpus or lag is None or lag < min(silence / 2, CLOCK_STOPPED_LAG):
        return None
    if any(not int(rfl, 16) & X86_EFLAGS_IF for rfl, _ in cpus):
        return None
    halted = sum(hlt == "1" for _, hlt in cpus)
    return (f"{len(cpus)} vCPUs with interrupts on ({halted} halted) and "
            f"the guest's clock {lag:.0f}s behind the host's: QEMU stopped "
            "delivering its interrupts")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--machine", default="std",
                    help="profile in --machines (default std)")
    ap.add_argument("--machines", default=MACHINES,
                    help="the profiles (default tests/vm/machines.toml)")
    ap.add_argument("--kernel", help="guest kernel image")
    ap.add_argument("--initrd", help="guest initramfs")
    ap.add_argument("--append", action="append", default=[],
                    help="more kernel arguments (repeatable)")
    ap.add_argument("--qemu-args", default="",
                    help="more QEMU arguments (shell words)")
    ap.add_argument("--print-args", action="store_true",
                    help="print the QEMU command, one argument a line")
    ap.add_argument("--workdir",
                    help="directory for the serial and monitor sockets")
    ap.add_argument("--log", help="merged console log")
    ap.add_argument("--mode", choices=["suite", "run"], default="suite")
    ap.add_argument("--total-timeout", type=float, default=900)
    ap.add_argument("--idle-timeout", type=float, default=180)
    ap.add_argument("--prog-timeout", type=float, default=300,
                    help="host-side bound per program (the guest has its "
                         "own, shorter one)")
    ap.add_argument("--note", action="append", default=[],
                    help="a vt line found before the boot (build step)")
    ap.add_argument("--verbose", action="store_true",
                    help="also echo the kernel console")
    a = ap.parse_args()
    try:
        qemu = qemu_command(load_machine(a.machines, a.machine), a.kernel,
                            a.initrd, a.append, shlex.split(a.qemu_args))
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        print(f"vmrun: {e}", file=sys.stderr)
        return 2
    if a.print_args:
        print("\n".join(qemu))
        return 0
    if not (a.workdir and a.log and a.kernel):
        ap.error("--workdir, --log and --kernel are needed to boot")

    res = Results()
    with open(a.log, "w", encoding="utf-8", errors="replace") as log:
        for line in a.note:
            res.add(line)
            log.write(f"[    0.00 B] {line}\n")
        # QEMU 7.2's TCG now and then stops delivering a guest's timer
        # interrupts: every vCPU halts for good with nothing to wake it.
        # That is the emulator's fault, not the guest's, and boot() tells
        # it from a guest hang; the suite gets one more boot for it.
        for attempt in (1, 2):
            frozen = boot(a, qemu, log, res, retry=attempt == 1)
            if not frozen:
                break
            out(f"# vm: boot {attempt}: {frozen}; booting again")
            log.write(f"# vm: boot {attempt}: {frozen}; booting again\n")
            res.next_boot()
    out(f"{res.passed} passed, {res.failed} failed, {res.skipped} skipped")
    return 1 if res.failed else 0


def boot(a, qemu, log, res, retry):
    """Boot the VM once and watch it; report into res.

    Returns why the guest froze when that was the emulator's fault and
    retry allows another boot (nothing of this boot's problems is then
    reported), else None.
    """
    serial_path = os.path.join(a.workdir, "tests.sock")
    mon_path = os.path.join(a.workdir, "monitor.sock")
    for p in (serial_path, mon_path):
        if os.path.exists(p):
            os.unlink(p)
    qemu = qemu + ["-serial", "stdio",
                   "-serial", f"unix:{serial_path},server=on,wait=on",
                   "-monitor", f"unix:{mon_path},server=on,wait=off"]
    t0 = time.monotonic()

    def stamp():
        return f"{time.monotonic() - t0:8.2f}"

    proc = subprocess.Popen(qemu, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    tests = connect_serial(serial_path, proc)
    if tests is None:
        res.add("not ok - vm/start: QEMU did not open its serial socket")
        rest = proc.stdout.read().decode(errors="replace") if \
            proc.poll() is not None else ""
        if rest:
            out(rest.strip())
        proc.kill()
        return None
    monitor = Monitor(mon_path)

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "kernel")
    sel.register(tests, selectors.EVENT_READ, "tests")
    bufs = {"kernel": b"", "tests": b""}

    problems = []
    kernel_problems = []
    nmi_problems = []       # the panic our own NMI brings
    running = None          # (name, start time)
    boot_at = end_at = None
    run_rc = None
    pinned = None
    suite_end = False
    last_output = time.monotonic()

    last_kernel = []        # the tail of ttyS0/QEMU, shown when it dies
    # The first report (an oops with its RIP and call trace), shown in
    # full: a later run in the same build/ overwrites the log.
    first_report = []
    # The guest's printk clock against ours: its first stamped line
    # gives the offset, the NMI's panic tells where the guest's clock is.
    clock = {"offset": None, "nmi_at": None, "lag": None}

    def on_kernel(line):
        log.write(f"[{stamp()} K] {line}\n")
        m = KERNEL_TIME.match(line)
        if m:
            now = time.monotonic() - t0
            if clock["offset"] is None:
                clock["offset"] = now - float(m.group(1))
            elif clock["nmi_at"] is not None and clock["lag"] is None:
                clock["lag"] = (clock["nmi_at"] - clock["offset"] -
                                float(m.group(1)))
        if "QEMU waiting for connection" not in line:
            last_kernel.append(line)
            del last_kernel[:-8]
        if a.verbose:
            out(f"  | {line}")
        if first_report and len(first_report) < REPORT_LINES:
            first_report.append(line)
        if KERNEL_PROBLEMS.search(line):
            if clock["nmi_at"] is None:
                kernel_problems.append(line.strip())
            else:
                nmi_problems.append(line.strip())
            if not first_report:
                first_report.append(line)

    def on_tests(line):
        nonlocal running, boot_at, end_at, run_rc, pinned, suite_end
        log.write(f"[{stamp()} T] {line}\n")
        if VT_LINE.match(line):
            res.add(line)
            return
        if line.startswith("VT-HOST "):
            cmd = line[len("VT-HOST "):].strip()
            try:
                reply = monitor.command(cmd)
            except OSError as e:
                reply = f"monitor error: {e}"
            log.write(f"[{stamp()} H] {cmd} -> {reply}\n")
            if a.mode == "run":
                out(f"host: {cmd} -> {reply or 'done'}")
            return
        if line.startswith("VT-BOOT"):
            boot_at = time.monotonic() - t0
        elif line.startswith("VT-PROG-START "):
            running = (line.split()[1], time.monotonic())
        elif line.startswith("VT-PROG-END "):
            parts = line.split()
            name, rc = parts[1], parts[2] if len(parts) > 2 else "?"
            if a.mode == "suite" and rc not in ("0", "1"):
                # 1 is "some case failed", already counted; anything
                # else means the program died or was killed.
                why = f"exit status {rc}"
                if rc == "137":
                    why = "killed: over the guest time limit (--timeout)"
                elif rc.isdigit() and int(rc) > 128:
                    why = f"killed by signal {int(rc) - 128}"
                res.add(f"not ok - vm/{name} did not finish ({why})")
            running = None
        elif line.startswith("VT-RUN-END "):
            run_rc = int(line.split()[1])
        elif line.startswith("VT-PINNED "):
            pinned = line.split()[1]
        elif line.startswith("VT-SUITE-END"):
            end_at = time.monotonic() - t0
            suite_end = True
        elif a.mode == "run":
            out(line)

    def read_events(events):
        """Hand each complete line of the ready streams on; True if any
        stream had something."""
        got = False
        for key, _ in events:
            src = key.data
            try:
                if src == "kernel":
                    chunk = os.read(key.fileobj.fileno(), 65536)
                else:
                    chunk = key.fileobj.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            got = True
            bufs[src] += chunk
            while b"\n" in bufs[src]:
                raw, bufs[src] = bufs[src].split(b"\n", 1)
                line = raw.decode(errors="replace").rstrip("\r")
                (on_kernel if src == "kernel" else on_tests)(line)
        return got

    timed_out = None
    silence = 0.0           # how long the guest had said nothing then
    while True:
        if proc.poll() is not None and not sel.get_map():
            break
        now = time.monotonic()
        if now - t0 > a.total_timeout:
            timed_out = f"total time {a.total_timeout:.0f}s exceeded"
        elif now - last_output > a.idle_timeout:
            timed_out = f"no output for {a.idle_timeout:.0f}s"
        elif running and now - running[1] > a.prog_timeout:
            timed_out = f"{running[0]} ran longer than {a.prog_timeout:.0f}s"
        if timed_out:
            silence = now - last_output
            break
        if suite_end and proc.poll() is not None:
            break
        events = sel.select(timeout=1.0)
        if not events and proc.poll() is not None:
            break
        if read_events(events):
            last_output = time.monotonic()
        if suite_end:
            # poweroff -f follows at once; do not wait on a stuck VM.
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass

    regs = ""               # the vCPUs' registers, when it went silent
    if timed_out and proc.poll() is None:
        # Before the kill, ask where a silent guest is stuck: the vCPUs'
        # registers from QEMU (no answer: QEMU itself is stuck), then an
        # NMI, which the profile's unknown_nmi_panic turns into a panic
        # with every task's stack and the CPUs' backtraces (panic_print);
        # both reach even a CPU spinning with interrupts off.
        # Each local APIC's timer, in-service and pending vectors tell
        # an interrupt QEMU never delivered from one the guest masked.
        def ask(cmd, keep=()):
            """Log the monitor's answer to CMD (its lines starting with
            one of KEEP, if any); return those lines."""
            try:
                reply = monitor.command(cmd)
            except OSError as e:
                reply = f"monitor error: {e}"
            fields = " | ".join(f for f in reply.split(" | ")
                                if f.startswith(keep))
            log.write(f"[{stamp()} H] {cmd}: "
                      f"{fields or reply or '(no reply)'}\n")
            return fields

        regs = ask("info registers -a", ("CPU#", "RIP=", "EIP="))
        for n in re.findall(r"CPU#(\d+)", regs):
            ask(f"info lapic {n}", APIC_FIELDS)
        ask("info status")
        ask("nmi")
        clock["nmi_at"] = time.monotonic() - t0
        end = time.monotonic() + 40
        while time.monotonic() < end and proc.poll() is None and \
                sel.get_map():
            read_events(sel.select(timeout=1.0))

    for src, rest in bufs.items():
        if rest:
            (on_kernel if src == "kernel" else on_tests)(
                rest.decode(errors="replace"))
    if proc.poll() is None:
        proc.kill()
        proc.wait()

    frozen = None
    if silence >= a.idle_timeout / 2:
        frozen = clock_stopped(regs, clock["lag"], silence)
    # Booting again: this boot's freeze, the kill and the panic of our
    # NMI are not reported; whatever came before them is.
    retrying = bool(frozen) and retry
    if timed_out:
        if not retrying:
            problems.append(f"VM killed: {timed_out}" + (
                f" while running {running[0]}" if running else ""))
            if frozen:
                problems.append(f"the emulator, not the guest: {frozen}")
    elif not suite_end:
        problems.append(f"VM ended (status {proc.returncode}) before the "
                        "suite finished" +
                        (f", during {running[0]}" if running else ""))
    if (timed_out or not suite_end) and not a.verbose:
        out("vm: the console ended with:")
        for line in last_kernel:
            out(f"  | {line}")
    if running and not timed_out:
        problems.append(f"{running[0]} did not finish")
    if first_report and not a.verbose:
        out("vm: the first kernel report:")
        for line in first_report:
            out(f"  | {line}")
    if not retrying:
        kernel_problems += nmi_problems
    for line in kernel_problems[:5]:
        problems.append(f"kernel log: {line}")
    if len(kernel_problems) > 5:
        problems.append(f"kernel log: {len(kernel_problems) - 5} more")
    if a.mode == "run" and run_rc not in (None, 0):
        problems.append(f"guest command exited {run_rc}")
    for p in problems:
        res.add(f"not ok - vm/{p}")

    total = time.monotonic() - t0
    timing = (f"boot to /init {boot_at:.1f}s, " if boot_at is not None
              else "") + (f"suite {end_at - (boot_at or 0):.1f}s, "
                          if end_at is not None else "")
    timing += f"total {total:.1f}s"
    if pinned is not None:
        timing += f", pinned pages at the end: {pinned}"
    log.write(f"[{stamp()} H] {timing}\n")
    out(f"vm: {timing}; log {a.log}")
    return frozen if retrying else None


if __name__ == "__main__":
    sys.exit(main())
