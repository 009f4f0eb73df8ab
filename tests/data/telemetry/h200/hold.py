# Holds GiB of GPU memory (argv[1]) until killed; writes argv[2] when allocated.
import sys, time, os, torch
gib = float(sys.argv[1])
x = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
with open(sys.argv[2], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
