#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The watcher's own test: tests/vm/vmrun.py against a stand-in QEMU.

The stand-in (this file, run as qemu-system-x86_64 from a PATH entry)
plays a guest on the two serial lines and the monitor as QEMU and the
guest's /init do, and its GUEST variable says how the guest behaves:

  ok          the suite runs to its end
  frozen      goes silent with every vCPU halted and its clock stopped
              (what QEMU 7.2's TCG does now and then): on every boot
  frozen-once the same on the first boot, fine on the second
  frozen-running  the same, but one vCPU runs (with interrupts on): on
              the first boot only
  hung        goes silent with every vCPU halted but its clock going
              on: a guest task asleep for good, the guest's own fault
  spinning    goes silent with its clock stopped but a vCPU running
              with interrupts off: the guest's fault too

Then clock_stopped(), the freeze diagnosis, on silences too long to play.

Prints one vt line per case; exit status 0 when all passed.
"""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REGS = ("CPU#{n}\r\nRAX=0000000000000000 RBX=0000000000000000\r\n"
        "RIP=ffffffff81e4a7af RFL={rfl} [---Z-P-] CPL=0 II=0 A20=1 "
        "SMM=0 HLT={hlt}\r\n")


def fake_qemu(args):
    """Play the guest GUEST says on the sockets vmrun.py asked for."""
    guest = os.environ["GUEST"]
    state = os.environ["BOOTS"]
    with open(state, "a") as f:
        f.write("boot\n")
    with open(state) as f:
        boot = len(f.read().split())
    if guest in ("frozen-once", "frozen-running") and boot > 1:
        guest = "ok"
    serial = [a for a in args if a.startswith("unix:")][0]
    monitor = [a for a in args if a.startswith("unix:")][1]
    t0 = time.monotonic()
    done = threading.Event()

    def kernel(secs, text):
        print(f"[{secs:12.6f}] {text}", flush=True)

    def serve_monitor(path):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        conn, _ = srv.accept()
        conn.sendall(b"QEMU 7.2.22 monitor\r\n(qemu) ")
        buf = b""
        while not done.is_set():
            chunk = conn.recv(4096)
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = line.decode().strip()
                reply = ""
                if cmd == "info registers -a":
                    for n in (0, 1):
                        spins = guest == "spinning" and n == 1
                        runs = guest == "frozen-running" and n == 1
                        reply += REGS.format(n=n,
                                             rfl="00000086" if spins
                                             else "00000246",
                                             hlt=0 if spins or runs else 1)
                elif cmd == "nmi":
                    # The guest's printk clock: stopped at 1 s, or
                    # where ours is when the guest's own timers work.
                    at = time.monotonic() - t0 if guest == "hung" else 1.0
                    kernel(at, "Kernel panic - not syncing: NMI: "
                           "Not continuing")
                    done.set()
                conn.sendall(f"{cmd}\r\n{reply}(qemu) ".encode())

    threading.Thread(target=serve_monitor,
                     args=(monitor.split(",")[0][5:],), daemon=True).start()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(serial.split(",")[0][5:])
    srv.listen(1)
    tests, _ = srv.accept()
    kernel(0.0, "Linux version 6.12.0 (stand-in)")
    for line in ("VT-BOOT", "ok - t-a/one", "ok - t-a/two",
                 "VT-PROG-END t-a 0", "VT-PROG-START t-group"):
        tests.sendall(f"{line}\n".encode())
    if guest == "ok":
        for line in ("ok - t-group/three", "VT-PROG-END t-group 0",
                     "VT-SUITE-END"):
            tests.sendall(f"{line}\n".encode())
        time.sleep(0.2)
        return 0
    done.wait(60)
    time.sleep(0.2)
    return 0


def install_stand_in(workdir):
    """A bin directory whose qemu-system-x86_64 is this file's fake_qemu."""
    bindir = os.path.join(workdir, "bin")
    os.makedirs(bindir, exist_ok=True)
    qemu = os.path.join(bindir, "qemu-system-x86_64")
    with open(qemu, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {__file__} "
                "--fake-qemu \"$@\"\n")
    os.chmod(qemu, 0o755)
    return bindir


def run(workdir, bindir, guest):
    """vmrun.py's output and status against a GUEST, and its boots."""
    boots = os.path.join(workdir, f"boots-{guest}")
    env = dict(os.environ, GUEST=guest, BOOTS=boots,
               PATH=bindir + os.pathsep + os.environ["PATH"])
    p = subprocess.run([sys.executable, os.path.join(HERE, "vmrun.py"),
                        "--kernel", "/nonexistent", "--workdir", workdir,
                        "--log", os.path.join(workdir, f"{guest}.log"),
                        "--idle-timeout", "2"],
                       env=env, capture_output=True, text=True, timeout=120)
    with open(boots) as f:
        n = len(f.read().split())
    return p.stdout, p.returncode, n


def diagnosis_cases():
    """clock_stopped() on the real watcher's scale (180 s of silence);
    the number of cases that failed."""
    sys.path.insert(0, HERE)
    import vmrun  # pylint: disable=import-outside-toplevel

    halted = "".join(REGS.format(n=n, rfl="00000246", hlt=1)
                     for n in (0, 1)).replace("\r\n", " | ")
    spinning = halted.replace("RFL=00000246", "RFL=00000086", 1)
    # name: registers, guest clock lag, silence, diagnosed?
    cases = {
        "frozen-at-once": (halted, 177, 180, True),
        # quiet on purpose for 110 s, then frozen: lag under half
        "frozen-late-in-a-quiet-program": (halted, 70, 180, True),
        "hung-clock-going-on": (halted, 3, 180, False),
        "frozen-shortly-before-the-kill": (halted, 40, 180, False),
        "spinning-irqs-off": (spinning, 177, 180, False),
    }
    failed = 0
    for name, (regs, lag, silence, want) in cases.items():
        got = vmrun.clock_stopped(regs, lag, silence) is not None
        if got == want:
            print(f"ok - vm/vmrun/diagnosis/{name}")
        else:
            failed += 1
            print(f"not ok - vm/vmrun/diagnosis/{name}: lag {lag}s of "
                  f"{silence}s silence {'' if got else 'not '}taken for "
                  "a frozen emulator")
    return failed


def main():
    if sys.argv[1:2] == ["--fake-qemu"]:
        return fake_qemu(sys.argv[2:])
    # what each guest must give: exit status, boots, lines that must be
    # there, lines that must not
    cases = {
        "ok": (0, 1, ["3 passed, 0 failed, 0 skipped"], ["# vm: boot"]),
        "frozen-once": (0, 2, ["# vm: boot 1: 2 vCPUs with interrupts on "
                               "(2 halted)",
                               "3 passed, 0 failed, 0 skipped"], []),
        "frozen-running": (0, 2, ["# vm: boot 1: 2 vCPUs with interrupts "
                                  "on (1 halted)",
                                  "3 passed, 0 failed, 0 skipped"], []),
        "frozen": (1, 2, ["not ok - vm/VM killed: no output for 2s",
                          "not ok - vm/the emulator, not the guest",
                          "2 passed, "], []),
        "hung": (1, 1, ["not ok - vm/VM killed: no output for 2s",
                        "not ok - vm/kernel log: "],
                 ["# vm: boot", "the emulator"]),
        "spinning": (1, 1, ["not ok - vm/VM killed: no output for 2s"],
                     ["# vm: boot", "the emulator"]),
    }
    failed = 0
    with tempfile.TemporaryDirectory(prefix="vfio-vmrun.") as workdir:
        bindir = install_stand_in(workdir)
        for guest, (rc, boots, want, unwanted) in cases.items():
            out, got_rc, got_boots = run(workdir, bindir, guest)
            why = []
            if got_rc != rc:
                why.append(f"exit {got_rc}, not {rc}")
            if got_boots != boots:
                why.append(f"{got_boots} boots, not {boots}")
            why += [f"no '{w}'" for w in want if w not in out]
            why += [f"'{u}' printed" for u in unwanted if u in out]
            for line in set(out.splitlines()):
                if line.startswith("ok - ") and \
                        out.splitlines().count(line) > 1:
                    why.append(f"'{line}' printed twice")
            if why:
                failed += 1
                print(f"not ok - vm/vmrun/{guest}: {'; '.join(why)}")
                print("\n".join(f"#   {l}" for l in out.splitlines()))
            else:
                print(f"ok - vm/vmrun/{guest}: exit {rc}, {boots} boot(s)")
    failed += diagnosis_cases()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
