#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Static check of a udev rules file, for systems whose udevadm has no
"verify" (systemd < 254, Debian 12): every rule is a comma-separated list
of KEY[{attr}] OP "value" with keys and operators udev knows, matches use
==/!=, assignments =/+=/:=, every rule both matches and assigns, and each
program the rules run is given in PROGRAMS (path=allowed subcommands).

usage: check-udev-rules.py RULES [PATH:SUBCMD,SUBCMD ...]
Prints "file:line: message" per problem; exit 1 when there is one."""
import re
import shlex
import sys

MATCH_KEYS = {"ACTION", "SUBSYSTEM", "KERNEL", "ENV", "TEST", "ATTR",
              "DRIVER", "DEVPATH", "TAG"}
ASSIGN_KEYS = {"IMPORT", "RUN", "OWNER", "GROUP", "MODE", "ENV",
               "ATTR", "TAG", "OPTIONS"}
PAIR = re.compile(r'\s*([A-Z_]+)(\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*'
                  r'"((?:[^"\\]|\\.)*)"\s*(,|$)')


def rules(path):
    """Yield (line number, logical line), joining backslash continuations."""
    buf, start = "", None
    with open(path, encoding="ascii") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if start is None:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                start = n
            if line.endswith("\\"):
                buf += line[:-1]
                continue
            yield start, buf + line
            buf, start = "", None
    if start is not None:
        yield start, buf


def main():
    path = sys.argv[1]
    programs = {}
    for arg in sys.argv[2:]:
        prog, _, subs = arg.partition(":")
        programs[prog] = set(subs.split(",")) if subs else set()
    bad = 0

    def err(n, msg):
        nonlocal bad
        bad += 1
        print(f"{path}:{n}: {msg}")

    for n, text in rules(path):
        pos, matches, assigns = 0, 0, 0
        while pos < len(text):
            m = PAIR.match(text, pos)
            if not m:
                err(n, f"cannot parse from: {text[pos:pos + 40]!r}")
                break
            key, attr, op, val = m.group(1), m.group(3), m.group(4), \
                m.group(5)
            pos = m.end()
            if op in ("==", "!="):
                matches += 1
                if key not in MATCH_KEYS:
                    err(n, f"{key} is not a match key here")
            else:
                assigns += 1
                if key not in ASSIGN_KEYS:
                    err(n, f"{key} cannot be assigned")
                if key in ("IMPORT", "RUN") and attr not in \
                        ("program", "builtin", None):
                    err(n, f"{key}{{{attr}}}: unknown type")
                if key == "IMPORT" and attr == "program" or \
                        key == "RUN" and attr in (None, "program"):
                    words = shlex.split(val)
                    if words[0] not in programs:
                        err(n, f"runs {words[0]}, not a known program")
                    elif programs[words[0]] and \
                            words[1] not in programs[words[0]]:
                        err(n, f"{words[0]} has no command {words[1]}")
            if m.group(6) == "" and pos < len(text):
                err(n, "missing comma")
        if not matches or not assigns:
            err(n, "a rule needs both a match and an assignment")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
