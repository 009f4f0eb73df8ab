#!/bin/bash
# One device call: proof of `servetop gpus` on an H200 against nvidia-smi, and
# capture of real nvidia-smi outputs as test fixtures. Everything lands in $OUT.
set -u
C=$PWD/.carry
export LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
F=$OUT/fx; mkdir -p $F
LOG=$OUT/log.txt
exec > >(tee $LOG) 2>&1
echo "== env"; uname -a; date -u; cat /etc/os-release | head -2; ldd --version | head -1
ST=$C/servetop
if ! $ST gpus --help >/dev/null 2>&1; then
  echo "prebuilt binary does not run here; building gpus-only"; $ST gpus --help 2>&1 | head -3
  gcc -O2 -std=c11 -D_GNU_SOURCE -Isrc -I$C/include src/util/*.c src/metrics/*.c src/telemetry/*.c \
    src/cli/cmd_gpus.c $C/gpus_main.c -o /tmp/servetop-gpus $C/libcjson.so.1 -l:libcurl.so.4 -ldl -lpthread -lm \
    && ST=/tmp/servetop-gpus-wrap && printf '#!/bin/sh\nshift\nexec /tmp/servetop-gpus "$@"\n' > $ST && chmod +x $ST
fi
Q=index,uuid,name,memory.total,memory.used,memory.reserved,utilization.gpu,power.draw,power.limit
A=gpu_uuid,pid,process_name,used_memory
echo "== idle"
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits | tee $F/idle_gpu_noheader.csv
$ST gpus; $ST gpus --json > $F/idle_servetop.json; echo "rc=$?"
nvidia-smi --query-compute-apps=$A --format=csv,noheader,nounits > $F/idle_apps_noheader.csv; echo "apps rc=$?"; cat $F/idle_apps_noheader.csv
echo "== start holders (3 GiB in a tree under ROOT, 1 GiB outside)"
rm -f /tmp/r1 /tmp/r2
bash -c "python3 $C/hold.py 3 /tmp/r1 & wait" & ROOT=$!
python3 $C/hold.py 1 /tmp/r2 & OTHER=$!
for i in $(seq 1 120); do [ -s /tmp/r1 ] && [ -s /tmp/r2 ] && break; sleep 0.5; done
sleep 2
echo "ROOT=$ROOT holder3=$(cat /tmp/r1) holder1=$(cat /tmp/r2) OTHER=$OTHER"
echo "== same moment: servetop (nvml) and nvidia-smi"
$ST gpus --json --pid $ROOT > $F/held_servetop_nvml.json & P1=$!
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits > $F/held_gpu_noheader.csv & P2=$!
nvidia-smi --query-compute-apps=$A --format=csv,noheader,nounits > $F/held_apps_noheader.csv & P3=$!
wait $P1 $P2 $P3
cat $F/held_servetop_nvml.json; cat $F/held_gpu_noheader.csv $F/held_apps_noheader.csv
nvidia-smi --query-gpu=$Q --format=csv,nounits > $F/held_gpu_header_nounits.csv
nvidia-smi --query-gpu=$Q --format=csv > $F/held_gpu_header_units.csv
nvidia-smi --query-compute-apps=$A --format=csv > $F/held_apps_header_units.csv
nvidia-smi --query-gpu=index,uuid,name,memory.used,fan.speed,power.draw.instant,temperature.memory,clocks_event_reasons.active,ecc.errors.corrected.volatile.total,mig.mode.current,power.limit --format=csv,noheader,nounits > $F/held_gpu_odd_noheader.csv
cat $F/held_gpu_header_units.csv $F/held_apps_header_units.csv $F/held_gpu_odd_noheader.csv
echo "== text, nvidia-smi backend, NVML via pynvml"
$ST gpus --pid $ROOT
time $ST gpus --json --telemetry nvidia-smi --pid $ROOT > $F/held_servetop_nvsmi.json; cat $F/held_servetop_nvsmi.json
time $ST gpus --json > /dev/null
python3 - <<'PY' 2>&1 | tee $F/pynvml.txt
import pynvml as n
n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(0)
m1 = n.nvmlDeviceGetMemoryInfo(h); print("v1 used", m1.used, "total", m1.total)
try:
    m2 = n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2); print("v2 used", m2.used, "reserved", m2.reserved, "total", m2.total)
except Exception as e: print("v2", e)
for p in n.nvmlDeviceGetComputeRunningProcesses(h): print("proc", p.pid, p.usedGpuMemory)
PY
echo "== watch (sampler thread, 0.5 s)"
$ST gpus --watch --json --count 4 --telemetry-interval 0.5 --pid $ROOT > $F/watch.jsonl; echo "rc=$?"; cut -c1-300 $F/watch.jsonl
echo "== after kill of the 3 GiB tree"
kill $(cat /tmp/r1) 2>/dev/null; wait $ROOT 2>/dev/null; sleep 1
$ST gpus --pid $ROOT; nvidia-smi --query-compute-apps=$A --format=csv,noheader,nounits
kill $OTHER 2>/dev/null; wait $OTHER 2>/dev/null
cd $OUT && tar czf fixtures.tgz fx && rm -rf fx
echo done
