# What the benchmark scripts read of a process from /proc (sourced, not run).

# utime+stime of a pid, in clock ticks (0 once it is gone).
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# The pid and all its descendants, one a line.
tree() {
  local p=$1
  echo "$p"
  for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do tree "$c"; done
}

# utime+stime of a pid and all its descendants, in clock ticks.
tree_ticks() {
  local s=0 p
  for p in $(tree "$1"); do s=$((s + $(ticks "$p"))); done
  echo "$s"
}
