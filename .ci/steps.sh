# Sourced by .ci/test (from the repository root): its steps, each timed, and its background lanes.
#
#   step TITLE      ends the step before (its times recorded) and starts this one: a header with
#                   the time elapsed since the command started.
#   lane NAME       runs the steps of the function lane_NAME in the background, in a process group
#                   of its own (`.ci/test --lane NAME`), its output in a log of its own, at the
#                   lowest CPU priority (nice 19): it takes the CPU the main lane leaves idle, and
#                   the main lane's tests, whose peers and timeouts want the CPU when they ask,
#                   run as they would alone.
#   join NAME       waits for lane NAME, prints its log whole, and fails if the lane failed.
#
# With MCPWIRE_CI_SERIAL=1 a lane runs where `lane` is called, in the foreground, and `join` does
# nothing: every step one after another (each step's wall time alone; one log top to bottom).
#
# At the end, passed or failed, a table: each step's wall time (elapsed) and CPU time (user+sys of
# the processes it ran, from bash's `times`: what it costs on a machine of its own, whatever ran
# beside it). A lane still running when the command fails is stopped and its log printed: no
# failure is lost.

ci_t0=${MCPWIRE_CI_T0:-$EPOCHSECONDS}
ci_lane=${MCPWIRE_CI_LANE:-}
if [[ -z $ci_lane ]]; then
  ci_scratch="$(mktemp -d "${TMPDIR:-/tmp}/mcpwire-ci.XXXXXX")"
else
  ci_scratch=$MCPWIRE_CI_SCRATCH
fi
step_name="" step_start=0 step_cpu=0
# lane_pid: the lanes running (unset when joined); lane_started: every lane started, its pid, until
# its CPU is taken out of the main lane's steps.
declare -A lane_pid=() lane_started=()
lane_rows=()

# cpu: centiseconds of CPU (user+sys) of this shell's children that have ended and been waited
# for. In this shell, not a subshell: a subshell's `times` counts only its own children.
cpu_now() {
  local user sys
  times >"$ci_scratch/times.$BASHPID"
  { read -r _ _; read -r user sys; } <"$ci_scratch/times.$BASHPID"
  cpu=$(($(secs_cs "$user") + $(secs_cs "$sys")))
}
# `1m2.345s` as centiseconds.
secs_cs() {
  [[ $1 =~ ^([0-9]+)m([0-9]+)[.,]([0-9]{2}) ]] || { echo 0; return; }
  echo $((10#${BASH_REMATCH[1]} * 6000 + 10#${BASH_REMATCH[2]} * 100 + 10#${BASH_REMATCH[3]}))
}
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# Records the step that ends: a line `wall<TAB>cpu<TAB>lane<TAB>title` (seconds) in rows.
step_end() {
  [[ -n $step_name ]] || return 0
  local cpu name lane_cpu
  cpu_now
  cpu=$((cpu - step_cpu))
  # A lane is this shell's child: when it ends, all its CPU is counted here, in the step during
  # which it ended. It counted its own steps: take its CPU out of this step's.
  for name in "${!lane_started[@]}"; do
    kill -0 "${lane_started[$name]}" 2>/dev/null && continue
    unset "lane_started[$name]"
    lane_cpu=$(cat "$ci_scratch/$name.cpu" 2>/dev/null || echo 0)
    cpu=$((cpu - lane_cpu))
  done
  ((cpu >= 0)) || cpu=0
  printf '%s\t%s\t%s\t%s\n' $((EPOCHSECONDS - step_start)) $((cpu / 100)) "${ci_lane:-main}" \
    "$step_name" >>"$ci_scratch/${ci_lane:-main}.rows"
  step_name=""
}

step() {
  step_end
  local cpu
  cpu_now
  step_name="$*" step_start=$EPOCHSECONDS step_cpu=$cpu
  printf '\n== %s  [%s elapsed%s]\n' "$*" "$(mmss $((EPOCHSECONDS - ci_t0)))" "${ci_lane:+, lane $ci_lane}"
}

lane() {
  local name=$1
  if [[ ${MCPWIRE_CI_SERIAL:-} == 1 ]]; then
    "lane_$name"
    return
  fi
  step_end
  MCPWIRE_CI_T0=$ci_t0 MCPWIRE_CI_LANE=$name MCPWIRE_CI_SCRATCH=$ci_scratch \
    setsid -w nice -n 19 "$PWD/.ci/test" --lane "$name" </dev/null >"$ci_scratch/$name.log" 2>&1 &
  lane_pid[$name]=$! lane_started[$name]=$!
  lane_rows+=("$ci_scratch/$name.rows")
  printf '\n== lane %s: started in the background  [%s elapsed]; its log follows when it ends\n' \
    "$name" "$(mmss $((EPOCHSECONDS - ci_t0)))"
}

join() {
  local name=$1 status=0
  [[ -n ${lane_pid[$name]:-} ]] || return 0
  # The time the main lane waits for this one (none when it has ended) is a step of its own.
  kill -0 "${lane_pid[$name]}" 2>/dev/null && step "waiting for lane $name"
  wait "${lane_pid[$name]}" || status=$?
  printf '\n== lane %s: ended (exit %s)  [%s elapsed]; its log:\n' "$name" "$status" \
    "$(mmss $((EPOCHSECONDS - ci_t0)))"
  cat "$ci_scratch/$name.log"
  unset "lane_pid[$name]"
  ((status == 0)) || { echo "lane $name failed (exit $status)"; exit "$status"; }
}

# The end of a lane (`.ci/test --lane NAME`): its last step recorded, its CPU (its steps' and its
# own shell's) written for the main shell.
lane_exit() {
  local status=$? user sys self
  [[ -z $step_name ]] || ((status == 0)) || step_name+=" (ended with exit $status)"
  step_end
  times >"$ci_scratch/times.$BASHPID"
  { read -r user sys; } <"$ci_scratch/times.$BASHPID"
  cpu_now
  self=$(($(secs_cs "$user") + $(secs_cs "$sys")))
  echo $((cpu + self)) >"$ci_scratch/$ci_lane.cpu"
  echo
  if ((status == 0)); then echo "lane $ci_lane: passed"; else echo "lane $ci_lane: FAILED (exit $status)"; fi
  return "$status"
}

# The end of the command: lanes still running stopped (their logs printed), then the table.
ci_exit() {
  local status=$? name rows wall cpu lane title total_cpu=0
  step_end
  for name in "${!lane_pid[@]}"; do
    printf '\n== lane %s: stopped (the command failed); its log:\n' "$name"
    kill -TERM -- "-${lane_pid[$name]}" 2>/dev/null || true
    wait "${lane_pid[$name]}" 2>/dev/null || true
    cat "$ci_scratch/$name.log"
  done
  echo
  echo "== time per step (wall: elapsed; cpu: user+sys of the step's processes; lane: main, or a"
  echo "   lane that ran in the background beside the main lane's steps)"
  printf '%8s %8s  %-8s %s\n' wall cpu lane step
  for rows in "$ci_scratch/main.rows" "${lane_rows[@]}"; do
    [[ -f $rows ]] || continue
    while IFS=$'\t' read -r wall cpu lane title; do
      printf '%8s %8s  %-8s %s\n' "$(mmss "$wall")" "$(mmss "$cpu")" "$lane" "${title:0:80}"
      total_cpu=$((total_cpu + cpu))
    done <"$rows"
  done
  printf '%8s %8s  %-8s %s\n' "$(mmss $((EPOCHSECONDS - ci_t0)))" "$(mmss "$total_cpu")" "" \
    "total (exit status $status)"
  rm -rf "$ci_scratch"
  return "$status"
}

if [[ -n $ci_lane ]]; then
  trap lane_exit EXIT
  # Stopped (the command failed): the lane says so, never that it passed.
  trap 'exit 143' TERM
else
  trap ci_exit EXIT
fi
