# report.awk — bench/run.sh's records (engine, grp(S), step, seconds, key=value...)
# as the Markdown tables of RESULTS.md. Run with -F'\t' after bench/fields.awk
# (kv, grp).

function rate(n, t) { return (t > 0 && n != "") ? grp(n / t) : "–" }
function mbs(b, t) { return (t > 0 && b != "") ? sprintf("%.1f", b / t / 1e6) : "–" }
function mb(kb) { return kb != "" ? sprintf("%.0f MB", kb / 1024) : "–" }
function cpu(c, t) { return (t > 0 && c != "") ? sprintf("%.1f s (%.0f %%)", c, 100 * c / t) : "–" }
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "–" }

{
  id = $1 SUBSEP $2
  if (!(id in seen)) { seen[id] = 1; order[++n] = id; eng[id] = $1; size[id] = $2 }
  secs[id, $3] = $4
  rest[id, $3] = $5
}

END {
  print "| engine | S | step | seconds | rows/s | cells/s | MB/s | peak RSS | CPU | load avg |"
  print "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
  for (k = 1; k <= n; k++) {
    id = order[k]
    e = eng[id]; S = size[id]
    if ((id, "load") in secs) {
      printf "| %s | %s | load (%s, %.0f MB on disk) | %.1f | | | | | | |\n", e, grp(S),
        kv(rest[id, "load"], "version"), kv(rest[id, "load"], "db_bytes") / 1e6, secs[id, "load"]
    }
    c = rest[id, "c"]; tc = secs[id, "c"]
    src = kv(c, "src_rows"); cells = kv(c, "cells")
    bytes = kv(rest[id, "b"], "bytes")
    if ((id, "a") in secs) {
      a = rest[id, "a"]; ta = secs[id, "a"]
      printf "| %s | %s | (a) extract | %.2f | %s | %s | %s | %s | | %s |\n", e, grp(S), ta,
        rate(kv(a, "rows"), ta), rate(cells, ta), mbs(kv(a, "bytes"), ta), mb(kv(a, "rss_kb")),
        kv(rest[id, "a1"], "loadavg")
    }
    if ((id, "b") in secs) {
      b = rest[id, "b"]; tb = secs[id, "b"]
      printf "| %s | %s | (b) store, widen sink | %.2f | %s | %s | %s | +%s | %s | %s |\n", e, grp(S), tb,
        rate(src, tb), rate(kv(b, "cells"), tb), mbs(kv(b, "bytes"), tb),
        mb(kv(b, "hwm_after_kb") - kv(b, "rss_before_kb")), cpu(kv(b, "cpu_seconds"), tb),
        kv(b, "loadavg")
    }
    if ((id, "braw") in secs) {
      r = rest[id, "braw"]; tr = secs[id, "braw"]
      printf "| %s | %s | (b-raw) store, bare LevelDB | %.2f | %s | %s | %s | +%s | %s | %s |\n", e, grp(S),
        tr, rate(src, tr), rate(kv(r, "cells"), tr), mbs(kv(r, "bytes"), tr),
        mb(kv(r, "hwm_after_kb") - kv(r, "rss_before_kb")), cpu(kv(r, "cpu_seconds"), tr),
        kv(r, "loadavg")
    }
    if (tc != "-" && tc != "") {
      printf "| %s | %s | **(c) widen migrate** | **%.2f** | **%s** | **%s** | **%s** | **%s** | %s | %s |\n",
        e, grp(S), tc, rate(src, tc), rate(cells, tc), mbs(bytes, tc), mb(kv(c, "rss_kb")),
        cpu(kv(c, "user") + kv(c, "sys"), tc), kv(c, "loadavg")
    } else if ((id, "c") in secs) {
      printf "| %s | %s | (c) widen migrate | failed: %s | | | | | | |\n", e, grp(S), substr(c, 7)
    }
    c2 = rest[id, "c2"]; tc2 = secs[id, "c2"]
    if (tc2 != "-" && tc2 != "") {
      printf "| %s | %s | **(c) widen migrate --jobs 2** | **%.2f** | **%s** | **%s** | **%s** | **%s** | %s | %s |\n",
        e, grp(S), tc2, rate(src, tc2), rate(cells, tc2), mbs(bytes, tc2), mb(kv(c2, "rss_kb")),
        cpu(kv(c2, "user") + kv(c2, "sys"), tc2), kv(c2, "loadavg")
    } else if ((id, "c2") in secs) {
      printf "| %s | %s | (c) widen migrate --jobs 2 | failed: %s | | | | | | |\n", e, grp(S), substr(c2, 7)
    }
    t = rest[id, "t"]; tt = secs[id, "t"]
    if (tt != "-" && tt != "") {
      printf "| %s | %s | (t) text-keyed table, widen migrate | %.2f | %s | %s | | %s | %s | %s |\n",
        e, grp(S), tt, rate(kv(t, "src_rows"), tt), rate(kv(t, "cells"), tt), mb(kv(t, "rss_kb")),
        cpu(kv(t, "user") + kv(t, "sys"), tt), kv(t, "loadavg")
    } else if ((id, "t") in secs) {
      printf "| %s | %s | (t) text-keyed table, widen migrate | failed: %s | | | | | | |\n", e, grp(S), substr(t, 7)
    }
  }

  print ""
  print "Throughput ratios (same work, so a ratio of times: c/a = t(a) / t(c)) and the targets of"
  print "issue 6: end to end ≥ 0.6 × min(a, b), i.e. t(c) ≤ max(t(a), t(b)) / 0.6; peak RSS ≤ 256 MB"
  print "and flat from S = 100,000 to 1,000,000."
  print ""
  print "| engine | S | source rows | cells | c/a | c/b | c/b-raw | c / min(a, b) | target ≥ 0.6 | c peak RSS | ≤ 256 MB | run wall (s) |"
  print "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|"
  for (k = 1; k <= n; k++) {
    id = order[k]
    e = eng[id]; S = size[id]
    c = rest[id, "c"]; tc = secs[id, "c"]
    if (tc == "-" || tc == "") {
      printf "| %s | %s | | | | | | | widen failed | | | %s |\n", e, grp(S), secs[id, "wall"]
      continue
    }
    ta = secs[id, "a"]; tb = secs[id, "b"]; tr = secs[id, "braw"]
    slow = ta > tb ? ta : tb
    m = (tc > 0) ? slow / tc : 0
    rss = kv(c, "rss_kb")
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", e, grp(S),
      grp(kv(c, "src_rows")), grp(kv(c, "cells")), ratio(ta, tc), ratio(tb, tc), ratio(tr, tc),
      sprintf("%.2f (%s slower)", m, ta > tb ? "a" : "b"), (m >= 0.6 ? "met" : "**not met**"),
      mb(rss), (rss / 1024 <= 256 ? "met" : "**not met**"), secs[id, "wall"]
    # Flatness: peak RSS of (c) at the smallest and the largest size, per engine.
    if (!(e in rss_lo) || S + 0 < size_lo[e]) { rss_lo[e] = rss; size_lo[e] = S + 0 }
    if (!(e in rss_hi) || S + 0 > size_hi[e]) { rss_hi[e] = rss; size_hi[e] = S + 0 }
    if (!(e in engines_seen)) { engines_seen[e] = 1; elist[++ne] = e }
  }
  print ""
  print "Parallel jobs: the target is t(--jobs 1) / t(--jobs 2) ≥ 1.6. \"machine busy\" is the share of"
  print "all cores busy while the run went on (/proc/stat: widen, the database server and anything"
  print "else); near 100 % the cores, not widen, bound the run. \"widen CPU\" is widen's own user + sys."
  print ""
  print "| engine | S | t(jobs 1) | t(jobs 2) | speed-up | target ≥ 1.6 | widen CPU jobs 1 / 2 | machine busy jobs 1 / 2 | peak RSS jobs 2 |"
  print "|---|---:|---:|---:|---:|---|---:|---:|---:|"
  for (k = 1; k <= n; k++) {
    id = order[k]
    e = eng[id]; S = size[id]
    c = rest[id, "c"]; tc = secs[id, "c"]; c2 = rest[id, "c2"]; tc2 = secs[id, "c2"]
    if (tc == "" || tc == "-" || tc2 == "" || tc2 == "-") continue
    printf "| %s | %s | %.2f | %.2f | %.2f | %s | %.1f s / %.1f s | %s %% / %s %% | %s |\n", e, grp(S), tc, tc2,
      tc / tc2, (tc / tc2 >= 1.6 ? "met" : "**not met**"), kv(c, "user") + kv(c, "sys"),
      kv(c2, "user") + kv(c2, "sys"), kv(c, "busy"), kv(c2, "busy"), mb(kv(c2, "rss_kb"))
  }
  for (k = 1; k <= ne; k++) {
    e = elist[k]
    if (size_hi[e] > size_lo[e] && rss_lo[e] > 0) {
      if (k == 1) print ""
      printf "Peak RSS of (c), %s: %s at S = %s, %s at S = %s (× %.2f for × %.0f the rows): %s.\n",
        e, mb(rss_lo[e]), grp(size_lo[e]), mb(rss_hi[e]), grp(size_hi[e]), rss_hi[e] / rss_lo[e],
        size_hi[e] / size_lo[e], (rss_hi[e] / rss_lo[e] <= 1.1 ? "flat" : "**not flat** (> +10 %)")
    }
  }
}
