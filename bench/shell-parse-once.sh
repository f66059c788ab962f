#!/bin/bash
# import-args before/after "parse once per import" (issue 36): times two meshwork-cli builds
# alternately, 3 rounds, on inputs where re-reading text per path or per eval dominated, and
# checks that both print the same bytes and exit codes (docs/RELIABILITY.md, "import-args").
# usage: bench/shell-parse-once.sh OLD_CLI NEW_CLI   (run from the source tree)
#   paths128-20k.sh: 7 file tests (128 paths) over 20 KB of ordinary lines, generated here;
#   eval-loop.sh: `eval "$CMD"` of a 1 KB string in a loop of 10,000, generated here;
#   and the pai-Megatron 70B script (256 paths) and two hostile fixtures.
set -u
OLD=$1 NEW=$2 TMP=$(mktemp -d)
python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
lines = ["#!/bin/bash"]
for i in range(7):
    lines.append(f"if [ -f /data/ckpt{i} ]; then EXTRA{i}=--use-{i}; else EXTRA{i}=; fi")
while sum(len(l) + 1 for l in lines) < 20000:
    k = len(lines)
    lines.append(f"[ -n \"$OPT_{k-1}\" ] && OPT_{k}=\"--some-flag-{k} ${{SIZE:-8}}\"  # a comment that makes the line longer {k}")
lines.append("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
             "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 "
             "--global-batch-size 64 --vocab-size 32000 $EXTRA0")
open(f"{d}/paths128-20k.sh", "w").write("\n".join(lines) + "\n")
body = 'X=$((X+1)); Y="${X}-a-b-c-d-e-f-g"; ' * 20
items = " ".join(str(i) for i in range(1, 10001))
open(f"{d}/eval-loop.sh", "w").write(
    "#!/bin/bash\nX=0\nCMD='%s'\nfor i in %s; do eval \"$CMD\"; done\n" % (body, items) +
    "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 24 --hidden-size 1024 "
    "--num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 --global-batch-size 64\n")
PY
inputs="$TMP/paths128-20k.sh $TMP/eval-loop.sh ../shared/realworld/megatron/pai__examples_llama3_run_pretrain_llama_70b.sh
        tests/fixtures/hostile/megatron-nested-loops.sh tests/fixtures/hostile/megatron-long-replace.sh"
uptime
for round in 1 2 3; do
  for f in $inputs; do
    for side in old new; do
      cli=$OLD; [ $side = new ] && cli=$NEW
      /usr/bin/time -f "%x %e %M" -o $TMP/t $cli import-args "$f" --cluster cpu-local > $TMP/$side.out 2>&1
      tail -1 $TMP/t >> "$TMP/$(basename $f).$side"
    done
    cmp -s $TMP/old.out $TMP/new.out || echo "DIFFERENT OUTPUT: $f"
  done
done
uptime
for f in $inputs; do
  b=$(basename $f)
  for side in old new; do
    printf "%-58s %s  exit %s  median %s s  max RSS %s KB\n" "$b" $side \
      "$(awk '{print $1}' $TMP/$b.$side | sort -u | tr '\n' ' ')" \
      "$(awk '{print $2}' $TMP/$b.$side | sort -n | sed -n 2p)" "$(awk '{print $3}' $TMP/$b.$side | sort -n | tail -1)"
  done
done
rm -rf "$TMP"
