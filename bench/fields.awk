# fields.awk — helpers shared by the benchmarks' report programs
# (bench/report.awk for run.sh, the table of designs.sh): load it first,
# `awk -f bench/fields.awk -f PROGRAM`.

# The value of `key` in s, a list of key=value words ("" when absent).
function kv(s, key,    n, i, parts, p) {
  n = split(s, parts, " ")
  for (i = 1; i <= n; i++) {
    p = index(parts[i], "=")
    if (p > 0 && substr(parts[i], 1, p - 1) == key) return substr(parts[i], p + 1)
  }
  return ""
}
# x with thousands separators (integer part).
function grp(x,    s, out) {
  s = sprintf("%.0f", x); out = ""
  while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
  return s out
}
