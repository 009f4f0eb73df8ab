#!/usr/bin/env python3
"""The processes a test started, found by the mark they inherit.

usage: marked_procs.py VAR

A shell test exports VAR=<something unique> (its work folder); every process it
starts inherits it. This prints, on one line, "comm(pid)" for each live
process (zombies, which have exited, are not counted) whose environment holds
VAR with that value, other than this script and the shell that runs it.
Nothing is printed when none is left.
"""
import os
import sys

var = sys.argv[1]
mark = f"{var}={os.environ[var]}".encode()
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    if int(pid) in (os.getpid(), os.getppid()):
        continue
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
        with open(f"/proc/{pid}/stat", "rb") as f:
            comm, state = f.read().rsplit(b")", 1)
    except OSError:
        continue
    if mark in env and state.split()[0] != b"Z":
        left.append(f"{comm.split(b'(', 1)[1].decode(errors='replace')}({pid})")
print(" ".join(left))
