// widen plan: a dry run. Reads a sample (or all) of the source inside the
// source's read-only snapshot, runs the whole transform, and prints for each
// target table its families, the row key's anatomy, the queries, the first
// rows as HBase's shell would show them, statistics and key collisions. It
// never opens the target: nothing is created or written anywhere (except the
// --diagram file asked for). Output shapes: docs/plan.md.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/diagram_file.h"
#include "cmd/exit_codes.h"
#include "cmd/html_report.h"
#include "cmd/run.h"
#include "cmd/watermark_sync.h"
#include "common/bytes.h"
#include "common/temporal.h"
#include "store/shell_printer.h"
#include "transform/access_plan.h"
#include "transform/cell_timestamp.h"
#include "transform/diagram.h"
#include "transform/key_anatomy.h"
#include "transform/preview.h"
#include "transform/range_check.h"

namespace widen {

namespace {

// How `widen sync` finds a target table's changes, and why (README,
// "Keeping the copy current"; cmd/watermark_sync.h): watermark mode when
// every source table it reads has a watermark, else digest mode.
struct TableSyncView {
  std::string mode;
  std::string why;
};

TableSyncView TableSync(const Plan& plan, const TablePlan& tp) {
  const WatermarkSupport w = CheckWatermarkSync(tp, plan.sync);
  if (w.ok) {
    return {"watermark",
            "every source table it reads has a watermark: each run reads the rows changed since "
            "the last run (minus the lookback) and rebuilds the target rows they reach; the "
            "first run (and --full) compares every row"};
  }
  return {"digest",
          "each run reads every source row and rewrites the rows whose digest changed (exact for "
          "joins, nests and deletes); not watermark mode because " +
              w.why};
}

// How one source table a target table reads is synced, for the plan.
struct SourceSyncView {
  std::string table;                 // "query 'x'" for a free-form query
  SourceUse use;                     // how the target table reads it
  std::vector<std::string> uses;     // "driving", "nested", "joined"
  const SourceSync* sync = nullptr;  // null for a free-form query
  std::string mode;                  // the mode the mapping chooses
  std::string why;
};

std::string LookbackText(const SourceSync& s) {
  const std::string amount = s.kind == WatermarkKind::kInteger
                                 ? fmt::format("{} values", s.lookback_values)
                                 : DurationText(s.lookback_micros / kMicrosPerMs);
  return s.lookback_given ? amount : amount + " (the default)";
}

std::string WhyText(const SourceSync& s) {
  if (s.spec == nullptr) return "no sync entry: digest is the default";
  if (s.mode == SyncMode::kDigest) {
    return fmt::format("the mapping's sync entry ({}) says so", s.spec->loc.ToString());
  }
  std::string deletes;
  if (s.soft_delete_column.empty() && !s.reconcile) {
    deletes = "hard deletes and key changes not detected (no soft delete, no reconcile)";
  } else {
    if (!s.soft_delete_column.empty()) {
      const Value& v = s.soft_delete_value;
      const std::string value = v.type() == ValueType::kText ? "'" + v.ToText() + "'" : v.ToText();
      deletes = fmt::format("soft delete where {} = {} (every command leaves such rows out)",
                            s.soft_delete_column, value);
    }
    if (s.reconcile) {
      deletes += deletes.empty() ? "reconcile" : ", reconcile";
    } else {
      deletes += "; hard deletes and key changes not detected without widen sync --reconcile";
    }
  }
  return fmt::format(
      "the mapping's sync entry ({}): watermark {} ({}, {}), tiebreak ({}){}, lookback {}; {}",
      s.spec->loc.ToString(), s.watermark, s.watermark_type, WatermarkKindNames().Name(s.kind),
      fmt::join(s.tiebreak, ", "), s.tiebreak_is_primary_key ? " (the primary key)" : "",
      LookbackText(s), deletes);
}

std::vector<SourceSyncView> SyncViews(const Plan& plan, const TablePlan& tp) {
  std::vector<SourceSyncView> out;
  for (const SourceUse& u : SourceUses(tp)) {
    SourceSyncView v;
    v.use = u;
    if (u.driving) v.uses.push_back("driving");
    if (u.nested) v.uses.push_back("nested");
    if (u.joined) v.uses.push_back("joined");
    if (u.table.empty()) {
      v.table = "query '" + tp.scan.alias + "'";
      v.mode = SyncModeNames().Name(SyncMode::kDigest);
      v.why = "a free-form query has no watermark: every run reads it whole";
    } else {
      v.table = u.table;
      v.sync = plan.sync.Find(u.table);
      const SyncMode mode = v.sync == nullptr ? SyncMode::kDigest : v.sync->mode;
      v.mode = SyncModeNames().Name(mode);
      v.why = v.sync == nullptr ? "no sync entry: digest is the default" : WhyText(*v.sync);
    }
    out.push_back(std::move(v));
  }
  return out;
}

// The indexes of `shown`'s cells that a scan returns: at most the family's
// VERSIONS newest versions of each column (the cells are in HBase order).
std::vector<size_t> ReadableCells(const CellBatch& shown, const TableDescriptor& d) {
  std::vector<size_t> out;
  int versions = 0;
  for (size_t i = 0; i < shown.size(); ++i) {
    const CellView c = shown.Get(i);
    if (i > 0) {
      const CellView p = shown.Get(i - 1);
      versions =
          p.row == c.row && p.family == c.family && p.qualifier == c.qualifier ? versions + 1 : 1;
    } else {
      versions = 1;
    }
    const FamilyDescriptor* f = d.Family(std::string(c.family));
    if (f != nullptr && versions > f->versions) continue;
    out.push_back(i);
  }
  return out;
}

using Json = nlohmann::ordered_json;

// The version of the JSON shape (docs/plan.md); bump it on incompatible changes.
constexpr int kPlanJsonFormat = 1;

std::string DecodedKey(const KeyCodec& codec, std::string_view key) {
  std::vector<std::pair<std::string, std::string>> parts;
  if (!codec.Decode(key, &parts)) return "";
  std::string s;
  for (const auto& [name, text] : parts) {
    if (!s.empty()) s += ' ';
    s += name + "=" + text;
  }
  return s;
}

std::string Range(int min, int max) {
  if (min == max) return std::to_string(min);
  return fmt::format("{}-{}", min, max < 0 ? "?" : std::to_string(max));
}

std::string FamilyText(const FamilyDescriptor& f) {
  return fmt::format(
      "VERSIONS {}, MIN_VERSIONS {}, TTL {}, COMPRESSION {}, BLOOMFILTER {}, BLOCKSIZE {}, "
      "IN_MEMORY {}, DATA_BLOCK_ENCODING {}",
      f.versions, f.min_versions, f.ttl_seconds > 0 ? std::to_string(f.ttl_seconds) : "FOREVER",
      f.compression, f.bloom_filter, f.block_size_bytes, f.in_memory ? "true" : "false",
      f.data_block_encoding);
}

std::string SizeText(const SizeStats& s) {
  if (s.count == 0) return "-";
  return fmt::format("min {}  avg {:.1f}  max {}", s.min, s.avg(), s.max);
}

// One query a table runs.
struct Query {
  std::string role;    // "rows" (the driving rows) or "nest"
  std::string prefix;  // nest: the qualifier prefixes down to it ("a", "a+t")
  std::string table;   // the source table (empty for a free-form query)
  std::string sql;
};

// The queries of a table: the driving rows, then each nest's (depth first).
std::vector<Query> Queries(const TablePlan& tp, Source* source) {
  std::vector<Query> q;
  q.push_back(Query{"rows", "", tp.scan.table, source->SelectSql(tp.scan)});
  std::vector<std::pair<const NestPlan*, std::string>> nests;
  for (const auto& n : tp.nests) nests.emplace_back(&n, ToStringBinary(n.prefix));
  for (size_t i = 0; i < nests.size(); ++i) {
    const auto [n, prefix] = nests[i];
    q.push_back(Query{"nest", prefix, n->spec->table, source->SelectSql(n->scan)});
    for (const auto& g : n->children) {
      nests.emplace_back(&g, prefix + "+" + ToStringBinary(g.prefix));
    }
  }
  return q;
}

using TableResult = TablePreviewResult;

// `text` (HBase's printable form) single-quoted for a shell: a quote is
// written \x27, which widen reads back as the byte.
std::string ShellArg(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "\\x27";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// One read of an access pattern, from a row the plan showed: the `by`
// values of that row and the prefixes that read them.
struct AccessExample {
  std::vector<std::pair<std::string, std::string>> by;  // column, value
  std::vector<std::string> prefixes;                    // raw bytes
  std::string command;  // the first prefix as a widen scan (or get) command line
};

// The proofs of the patterns the tables of `results` declare, each with an
// example read (from the served table's first shown row, when it is shown).
struct AccessView {
  AccessProof proof;
  std::optional<AccessExample> example;
};

std::vector<AccessView> AccessViews(const Design& in, const std::vector<TableResult>& results) {
  std::vector<const TablePlan*> all;
  for (const TablePlan& tp : in.plan.tables) all.push_back(&tp);
  std::vector<AccessView> out;
  for (AccessProof& proof : ProveAccessPatterns(all, in.schema)) {
    const bool shown = std::any_of(results.begin(), results.end(), [&](const TableResult& r) {
      return r.plan->mapping == proof.declared_on->mapping;
    });
    if (!shown) continue;
    AccessView v{std::move(proof), std::nullopt};
    const AccessProof& pr = v.proof;
    for (const TableResult& r : results) {
      if (pr.kind == AccessKind::kNotServed || r.plan->mapping != pr.served_by->mapping) continue;
      if (r.preview.shown_rows.empty()) break;
      auto row = pr.served_by->key.DecodeRow(r.preview.shown_rows.front().key);
      if (!row.ok()) break;
      AccessExample e;
      for (size_t i = 0; i < pr.by_indexes.size() && i < pr.pattern->by.size(); ++i) {
        e.by.emplace_back(pr.pattern->by[i].column.ToString(), (*row)[pr.by_indexes[i]].ToText());
      }
      if (!AccessPrefixes(pr, *row, &e.prefixes).ok() || e.prefixes.empty()) break;
      const std::string table = pr.served_by->descriptor.FullName();
      // With the mapping, for its target and to decode the key.
      const std::string mapping = ShellWord(in.mapping.file);
      e.command = pr.kind == AccessKind::kGet
                      ? fmt::format("widen get {} {} -m {} --decode", table,
                                    ShellArg(ToStringBinary(e.prefixes[0])), mapping)
                      : fmt::format("widen scan {} --prefix {} -m {} --decode", table,
                                    ShellArg(ToStringBinary(e.prefixes[0])), mapping);
      v.example = std::move(e);
      break;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string KindText(AccessKind kind) {
  switch (kind) {
    case AccessKind::kGet:
      return "GET";
    case AccessKind::kScan:
      return "SCAN";
    case AccessKind::kBucketScan:
      return "BUCKET SCAN";
    case AccessKind::kNotServed:
      return "NOT SERVED";
  }
  return "?";
}

void PrintText(const PlanOptions& o, const Design& in, const std::vector<TableResult>& results,
               const std::vector<AccessView>& access, std::string* out) {
  const bool tty = isatty(STDOUT_FILENO) != 0;
  for (const TableResult& r : results) {
    const TablePlan& tp = *r.plan;
    const TablePreview& p = r.preview;
    const std::string from =
        tp.scan.table.empty() ? "query '" + tp.scan.alias + "'" : tp.scan.table;
    *out += fmt::format("== {}\n", tp.descriptor.FullName());
    *out += fmt::format(
        "source     {}{}\n", from,
        p.estimated_rows >= 0
            ? fmt::format(" (about {} rows by the source's statistics)", p.estimated_rows)
            : " (no row estimate)");
    for (size_t i = 0; i < tp.descriptor.families.size(); ++i) {
      const auto& f = tp.descriptor.families[i];
      *out +=
          fmt::format("{}{}  {}\n", i == 0 ? "families   " : "           ", f.name, FamilyText(f));
    }
    const TableSyncView table_sync = TableSync(in.plan, tp);
    *out += fmt::format("sync       {}: {}\n", table_sync.mode, table_sync.why);
    {
      const std::vector<SourceSyncView> views = SyncViews(in.plan, tp);
      size_t table_width = 0, uses_width = 0;
      for (const auto& v : views) {
        table_width = std::max(table_width, v.table.size());
        uses_width = std::max(uses_width, fmt::format("{}", fmt::join(v.uses, ", ")).size());
      }
      for (const auto& v : views) {
        *out += fmt::format("           {:<{}}  {:<{}}  {}: {}\n", v.table, table_width,
                            fmt::format("{}", fmt::join(v.uses, ", ")), uses_width, v.mode, v.why);
      }
    }
    const KeyAnatomy& a = r.anatomy;
    *out += fmt::format("row key    {}{}, {} bytes: {}\n", KeyFormNames().Name(a.form),
                        a.form == KeyForm::kText
                            ? fmt::format(", separator '{}'", ToStringBinary(a.separator))
                            : "",
                        Range(a.min_bytes, a.max_bytes), a.compact);
    // One line per piece, in columns as wide as their widest entry.
    std::vector<std::array<std::string, 6>> lines;
    lines.push_back({"offset", "bytes", "part", "type", "source", "encoding"});
    for (const auto& piece : a.pieces) {
      if (piece.kind == KeyPieceAnatomy::Kind::kSeparator) continue;
      std::string src = piece.column;
      if (!piece.source_type.empty()) src += " (" + piece.source_type + ")";
      lines.push_back({piece.offset < 0 ? "var" : std::to_string(piece.offset),
                       Range(piece.min_bytes, piece.max_bytes), piece.name,
                       piece.type.empty() ? KeyAnatomy::KindName(piece.kind) : piece.type,
                       src.empty() ? "-" : src, piece.encoding});
    }
    std::array<size_t, 6> width{};
    for (const auto& l : lines) {
      for (size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
    }
    for (const auto& l : lines) {
      std::string line = "          ";
      for (size_t i = 0; i < l.size(); ++i) {
        line += " " + l[i];
        if (i + 1 < l.size()) line.append(width[i] - l[i].size() + 1, ' ');
      }
      *out += line + "\n";
    }
    *out += fmt::format("key order  {}: {}\n", KeyOrderName(tp.order.how), tp.order.why);
    bool first_access = true;
    for (const AccessView& v : access) {
      if (v.proof.declared_on != &tp) continue;
      const AccessProof& pr = v.proof;
      *out += fmt::format("{}{} ({}): {}{}: {}\n", first_access ? "access     " : "           ",
                          pr.pattern->name, pr.pattern->loc.ToString(),
                          pr.kind == AccessKind::kNotServed ? "ERROR: " : "", KindText(pr.kind),
                          pr.kind == AccessKind::kNotServed ? pr.problem : pr.how);
      first_access = false;
      if (pr.kind == AccessKind::kNotServed) {
        *out += fmt::format("             fix: {}\n", pr.fix);
      } else if (v.example) {
        std::vector<std::string> by;
        for (const auto& [c, value] : v.example->by) by.push_back(c + "=" + value);
        *out += fmt::format(
            "             e.g. {}: {}{}\n",
            by.empty() ? "every row" : fmt::format("{}", fmt::join(by, ", ")), v.example->command,
            v.example->prefixes.size() > 1 ? fmt::format(" (and the other {} buckets' prefixes)",
                                                         v.example->prefixes.size() - 1)
                                           : "");
      }
    }
    const auto queries = Queries(tp, in.source.get());
    for (size_t i = 0; i < queries.size(); ++i) {
      const Query& q = queries[i];
      *out +=
          fmt::format("{}{}: {}\n", i == 0 ? "queries    " : "           ",
                      q.role == "rows" ? "rows" : "nest " + q.prefix + " (" + q.table + ")", q.sql);
    }

    if (o.limit > 0) {
      *out +=
          fmt::format("\nfirst {} row(s), as HBase's shell shows a scan:\n", p.shown_rows.size());
      std::ostringstream s;
      ShellPrinterOptions po;
      if (!tty) po.first_column_width = 0;
      ShellPrinter printer(s, ShellFormat::kScan, po);
      printer.Header();
      for (size_t i : ReadableCells(p.shown, tp.descriptor)) printer.Cell(p.shown.Get(i));
      printer.Footer();
      *out += s.str();
      *out += "row keys decoded, and the source rows they come from:\n";
      for (const auto& row : p.shown_rows) {
        *out += fmt::format(" {}  =  {}  <-  {} {}\n", ToStringBinary(row.key),
                            DecodedKey(tp.key, row.key), from, row.source_id);
      }
    }

    *out += fmt::format("\nstatistics ({})\n",
                        p.complete ? fmt::format("all {} source rows", p.driving_rows)
                                   : fmt::format("sample: the first {} source rows; --full reads "
                                                 "all",
                                                 p.driving_rows));
    *out += fmt::format("  rows            {} written", p.run.rows);
    if (p.row_keys != p.run.rows) {
      *out += fmt::format(" (as {} row key{}: source rows share keys)", p.row_keys,
                          p.row_keys == 1 ? "" : "s");
    }
    *out += fmt::format(", {} rejected, {} empty (no cell)", p.run.rejected, p.run.empty_rows);
    if (p.run.orphans > 0) *out += fmt::format(", {} orphan child rows", p.run.orphans);
    *out += "\n";
    if (p.run.empty_rows > 0) {
      *out += fmt::format(
          "  empty rows      every mapped value NULL and no nested row: no row is written "
          "(the first: {})\n",
          p.run.first_empty_row);
    }
    if (p.run.empty_children > 0) {
      *out += fmt::format(
          "  empty nested    {} nested row(s) with every value column NULL: a cell {{}} "
          "with layout json, no cell with layouts cells and value (the first: {})\n",
          p.run.empty_children, p.run.first_empty_child);
    }
    *out +=
        fmt::format("  cells           {}  per row: {}\n", p.run.cells, SizeText(p.cells_per_row));
    *out += fmt::format("  row key bytes   {}\n", SizeText(p.key_bytes));
    *out += fmt::format("  qualifier bytes {}\n", SizeText(p.qualifier_bytes));
    *out += fmt::format("  value bytes     {}\n", SizeText(p.value_bytes));
    *out += fmt::format("  row bytes       {}\n", SizeText(p.row_bytes));
    std::string total;
    if (p.complete) {
      total = HumanBytes(static_cast<double>(p.run.bytes)) + " (every row)";
    } else if (p.estimated_total_bytes >= 0) {
      total =
          fmt::format("{} in the sample; about {} for all ~{} rows",
                      HumanBytes(static_cast<double>(p.run.bytes)),
                      HumanBytes(static_cast<double>(p.estimated_total_bytes)), p.estimated_rows);
    } else {
      total = HumanBytes(static_cast<double>(p.run.bytes)) +
              " in the sample (no row estimate to extrapolate; run ANALYZE on the source)";
    }
    *out += fmt::format("  bytes           {}\n", total);
    std::string fams;
    for (const auto& f : p.families) {
      if (!fams.empty()) fams += "; ";
      fams += fmt::format("{}: {} cells, {}", f.name, f.cells,
                          HumanBytes(static_cast<double>(f.bytes)));
    }
    *out += fmt::format("  families        {}\n", fams);
    for (size_t i = 0; i < p.widest.size(); ++i) {
      const auto& w = p.widest[i];
      *out += fmt::format("  {}{} [{}]: {} cells, {}\n",
                          i == 0 ? "widest rows     " : "                ", ToStringBinary(w.key),
                          w.source_id, w.cells, HumanBytes(static_cast<double>(w.bytes)));
    }
    if (!p.salt_buckets.empty()) {
      std::string b;
      uint64_t lo = UINT64_MAX, hi = 0;
      for (size_t i = 0; i < p.salt_buckets.size(); ++i) {
        b += fmt::format("{}{}:{}", i ? " " : "", i, p.salt_buckets[i]);
        lo = std::min(lo, p.salt_buckets[i]);
        hi = std::max(hi, p.salt_buckets[i]);
      }
      *out += fmt::format("  salt buckets    {} (rows per bucket; min {}, max {})\n", b, lo, hi);
    }

    if (p.collisions == 0) {
      *out += fmt::format("  collisions      none{}\n",
                          p.complete ? "" : " in the sample (--full checks every row)");
    } else {
      *out +=
          fmt::format("  collisions      ERROR: {}{} cell(s) would silently replace another cell\n",
                      p.collisions_exact ? "" : "at least ", p.collisions);
      for (const auto& c : p.collision_examples) {
        if (c.same_source_row) {
          *out += fmt::format(
              "    row {} column {}: given twice by source row {} (two nested rows with "
              "one id, or a column and a nested cell with one qualifier)\n",
              ToStringBinary(c.row_key), c.column, c.first_source);
        } else {
          *out += fmt::format(
              "    row {} column {}: source rows [{}] and [{}] give the same row "
              "key; the second replaces the first\n",
              ToStringBinary(c.row_key), c.column, c.first_source, c.second_source);
        }
      }
    }
    if (p.beyond_versions > 0) {
      *out += fmt::format(
          "  versions        {} cell(s) are older versions beyond their family's VERSIONS: "
          "stored, but reads return only the newest VERSIONS\n",
          p.beyond_versions);
    }
    if (p.merged_rows > 0) {
      *out += fmt::format(
          "  merged rows     {} source row(s) share a row key with an earlier "
          "row but write other columns\n",
          p.merged_rows);
    }
    if (p.run.rejected > 0) {
      *out += fmt::format(
          "  rejects         {} row(s) cannot be encoded (migrate stops at the "
          "first unless --rejects FILE):\n",
          p.run.rejected);
      for (const auto& rj : p.reject_examples) {
        *out += fmt::format("    {}: {}\n", rj.source_id, rj.reason);
      }
    }
    // Over every source row, whatever the sample: one min/max query per column.
    for (size_t i = 0; i < r.ranges.findings.size(); ++i) {
      const RangeFinding& f = r.ranges.findings[i];
      *out += fmt::format("  {}WARNING: {}: {}\n", i == 0 ? "ranges          " : "                ",
                          f.loc.ToString(), f.message);
    }
    for (const auto& n : r.ranges.notes) *out += fmt::format("  note: {}\n", n);
    *out += "\n";
  }
}

Json SizeJson(const SizeStats& s) {
  if (s.count == 0) return Json{{"min", nullptr}, {"avg", nullptr}, {"max", nullptr}};
  return Json{{"min", s.min}, {"avg", s.avg()}, {"max", s.max}};
}

Json Nullable(int64_t v) { return v < 0 ? Json(nullptr) : Json(v); }

Json ToJson(const PlanOptions& o, const Design& in, const std::vector<TableResult>& results,
            const std::vector<AccessView>& access, int64_t timestamp_ms) {
  Json doc;
  doc["widen_plan"] = kPlanJsonFormat;
  doc["mapping"] = in.mapping.file;
  doc["source"] = MaskUrl(in.mapping.source_url);
  doc["mode"] = o.full ? "full" : "sample";
  doc["sample_rows"] = o.full ? Json(nullptr) : Json(o.sample);
  doc["timestamp_ms"] = timestamp_ms;
  Json tables = Json::array();
  uint64_t errors = 0;
  for (const TableResult& r : results) {
    const TablePlan& tp = *r.plan;
    const TablePreview& p = r.preview;
    Json t;
    t["name"] = tp.descriptor.FullName();
    t["namespace"] = tp.descriptor.name_space;
    t["table"] = tp.descriptor.table;
    t["source_table"] = tp.scan.table.empty() ? Json(nullptr) : Json(tp.scan.table);
    t["estimated_source_rows"] = Nullable(p.estimated_rows);
    Json fams = Json::array();
    for (const auto& f : tp.descriptor.families) {
      fams.push_back(Json{{"name", f.name},
                          {"versions", f.versions},
                          {"min_versions", f.min_versions},
                          {"ttl_seconds", f.ttl_seconds},
                          {"compression", f.compression},
                          {"bloom_filter", f.bloom_filter},
                          {"block_size_bytes", f.block_size_bytes},
                          {"in_memory", f.in_memory},
                          {"data_block_encoding", f.data_block_encoding}});
    }
    t["families"] = fams;
    Json sources = Json::array();
    const TableSyncView table_sync = TableSync(in.plan, tp);
    for (const SourceSyncView& v : SyncViews(in.plan, tp)) {
      Json src;
      src["table"] = v.use.table.empty() ? Json(nullptr) : Json(v.use.table);
      src["uses"] = v.uses;
      src["mode"] = v.mode;
      src["runs_as"] = table_sync.mode;
      src["entry"] = v.sync != nullptr && v.sync->spec != nullptr
                         ? Json(v.sync->spec->loc.ToString())
                         : Json(nullptr);
      src["why"] = v.why;
      if (v.sync != nullptr && v.sync->mode == SyncMode::kWatermark) {
        const SourceSync& w = *v.sync;
        src["watermark"] = Json{{"column", w.watermark},
                                {"type", w.watermark_type},
                                {"kind", WatermarkKindNames().Name(w.kind)}};
        src["tiebreak"] = w.tiebreak;
        src["tiebreak_is_primary_key"] = w.tiebreak_is_primary_key;
        src["lookback"] =
            w.kind == WatermarkKind::kInteger
                ? Json{{"values", w.lookback_values}, {"default", !w.lookback_given}}
                : Json{{"ms", w.lookback_micros / kMicrosPerMs}, {"default", !w.lookback_given}};
        src["soft_delete"] =
            w.soft_delete_column.empty()
                ? Json(nullptr)
                : Json{{"column", w.soft_delete_column}, {"value", w.soft_delete_value.ToText()}};
        src["reconcile"] = w.reconcile;
      }
      sources.push_back(std::move(src));
    }
    t["sync"] =
        Json{{"mode", table_sync.mode}, {"why", table_sync.why}, {"sources", std::move(sources)}};
    const KeyAnatomy& a = r.anatomy;
    Json key;
    key["form"] = KeyFormNames().Name(a.form);
    key["separator"] = a.form == KeyForm::kText ? Json(a.separator) : Json(nullptr);
    key["anatomy"] = a.compact;
    key["min_bytes"] = a.min_bytes;
    key["max_bytes"] = Nullable(a.max_bytes);
    Json parts = Json::array();
    for (const auto& piece : a.pieces) {
      parts.push_back(
          Json{{"kind", KeyAnatomy::KindName(piece.kind)},
               {"name", piece.name},
               {"column", piece.column.empty() ? Json(nullptr) : Json(piece.column)},
               {"source_type", piece.source_type.empty() ? Json(nullptr) : Json(piece.source_type)},
               {"type", piece.type.empty() ? Json(nullptr) : Json(piece.type)},
               {"encoding", piece.encoding},
               {"offset", Nullable(piece.offset)},
               {"min_bytes", piece.min_bytes},
               {"max_bytes", Nullable(piece.max_bytes)}});
    }
    key["parts"] = parts;
    t["key"] = key;
    t["key_order"] = Json{{"how", KeyOrderName(tp.order.how)}, {"why", tp.order.why}};
    Json queries = Json::array();
    for (const Query& q : Queries(tp, in.source.get())) {
      queries.push_back(Json{{"role", q.role},
                             {"prefix", q.prefix.empty() ? Json(nullptr) : Json(q.prefix)},
                             {"table", q.table.empty() ? Json(nullptr) : Json(q.table)},
                             {"sql", q.sql}});
    }
    t["queries"] = queries;
    // The shown rows, their cells in HBase order.
    Json rows = Json::array();
    for (size_t i : ReadableCells(p.shown, tp.descriptor)) {
      const CellView c = p.shown.Get(i);
      if (rows.empty() || rows.back()["key"] != ToStringBinary(c.row)) {
        Json row;
        row["key"] = ToStringBinary(c.row);
        std::vector<std::pair<std::string, std::string>> named;
        Json decoded = Json::array();
        if (tp.key.Decode(c.row, &named)) {
          for (const auto& [part, text] : named) {
            decoded.push_back(Json{{"part", part}, {"value", text}});
          }
        }
        row["decoded"] = decoded;
        row["source"] = nullptr;
        for (const auto& s : p.shown_rows) {
          if (s.key == c.row) {
            row["source"] = s.source_id;
            break;
          }
        }
        row["cells"] = Json::array();
        rows.push_back(row);
      }
      rows.back()["cells"].push_back(
          Json{{"column", std::string(c.family) + ":" + ToStringBinary(c.qualifier)},
               {"timestamp", c.timestamp_ms},
               {"value", ToStringBinary(c.value)}});
    }
    t["rows"] = rows;
    Json stats;
    stats["complete"] = p.complete;
    stats["driving_rows"] = p.driving_rows;
    stats["source_rows"] = p.run.source_rows;
    stats["rows"] = p.run.rows;
    stats["cells"] = p.run.cells;
    stats["rejected"] = p.run.rejected;
    stats["empty_rows"] = p.run.empty_rows;
    stats["empty_nested_rows"] = p.run.empty_children;
    stats["beyond_versions"] = p.beyond_versions;
    stats["row_keys"] = p.row_keys;
    stats["orphans"] = p.run.orphans;
    stats["bytes"] = p.run.bytes;
    stats["estimated_total_bytes"] = Nullable(p.estimated_total_bytes);
    stats["cells_per_row"] = SizeJson(p.cells_per_row);
    stats["row_key_bytes"] = SizeJson(p.key_bytes);
    stats["qualifier_bytes"] = SizeJson(p.qualifier_bytes);
    stats["value_bytes"] = SizeJson(p.value_bytes);
    stats["row_bytes"] = SizeJson(p.row_bytes);
    Json fstats = Json::array();
    for (const auto& f : p.families) {
      fstats.push_back(Json{{"name", f.name}, {"cells", f.cells}, {"bytes", f.bytes}});
    }
    stats["families"] = fstats;
    Json widest = Json::array();
    for (const auto& w : p.widest) {
      widest.push_back(Json{{"key", ToStringBinary(w.key)},
                            {"source", w.source_id},
                            {"cells", w.cells},
                            {"bytes", w.bytes}});
    }
    stats["widest_rows"] = widest;
    stats["salt_buckets"] = p.salt_buckets.empty() ? Json(nullptr) : Json(p.salt_buckets);
    t["stats"] = stats;
    Json examples = Json::array();
    for (const auto& c : p.collision_examples) {
      examples.push_back(Json{{"row_key", ToStringBinary(c.row_key)},
                              {"column", c.column},
                              {"timestamp", c.timestamp_ms},
                              {"first_source", c.first_source},
                              {"second_source", c.second_source},
                              {"same_source_row", c.same_source_row}});
    }
    t["collisions"] = Json{{"count", p.collisions},
                           {"exact", p.collisions_exact},
                           {"merged_rows", p.merged_rows},
                           {"examples", examples}};
    Json rejects = Json::array();
    for (const auto& rj : p.reject_examples) {
      rejects.push_back(Json{{"source", rj.source_id}, {"reason", rj.reason}});
    }
    t["rejects"] = Json{{"count", p.run.rejected}, {"examples", rejects}};
    Json ranges = Json::array();
    for (const auto& f : r.ranges.findings) {
      ranges.push_back(
          Json{{"kind", f.kind == RangeFinding::Kind::kKeyWidth ? "key_width" : "version_time"},
               {"file", f.loc.file},
               {"line", f.loc.line},
               {"column", f.loc.column},
               {"message", f.message},
               {"fix", f.fix}});
    }
    t["range_checks"] = Json{{"findings", ranges}, {"notes", r.ranges.notes}};
    errors += p.collisions;
    Json patterns = Json::array();
    for (const AccessView& v : access) {
      if (v.proof.declared_on != &tp) continue;
      const AccessProof& pr = v.proof;
      Json a;
      a["name"] = pr.pattern->name;
      a["file"] = pr.pattern->loc.file;
      a["line"] = pr.pattern->loc.line;
      a["column"] = pr.pattern->loc.column;
      Json by = Json::array();
      for (const auto& c : pr.pattern->by) by.push_back(c.column.ToString());
      a["by"] = by;
      Json order = Json::array();
      for (const auto& c : pr.pattern->order) {
        order.push_back(Json{{"column", c.column.ToString()}, {"desc", c.desc}});
      }
      a["order"] = order;
      a["served"] = AccessKindNames().Name(pr.kind);
      const bool served = pr.kind != AccessKind::kNotServed;
      a["served_by"] = served ? Json(pr.served_by->descriptor.FullName()) : Json(nullptr);
      a["leading_parts"] = served ? Json(pr.leading_parts) : Json(nullptr);
      a["buckets"] = pr.kind == AccessKind::kBucketScan ? Json(pr.buckets) : Json(nullptr);
      a["how"] = pr.how;
      a["problem"] = served ? Json(nullptr) : Json(pr.problem);
      a["fix"] = served ? Json(nullptr) : Json(pr.fix);
      if (v.example) {
        Json ex_by = Json::object();
        for (const auto& [c, value] : v.example->by) ex_by[c] = value;
        Json prefixes = Json::array();
        for (const auto& px : v.example->prefixes) prefixes.push_back(ToStringBinary(px));
        a["example"] = Json{{"by", ex_by}, {"prefixes", prefixes}, {"command", v.example->command}};
      } else {
        a["example"] = nullptr;
      }
      if (!served) ++errors;
      patterns.push_back(std::move(a));
    }
    t["access"] = patterns;
    tables.push_back(t);
  }
  doc["tables"] = tables;
  doc["errors"] = errors;
  return doc;
}

// The --html page (cmd/html_report.h): the diagram through Graphviz (the
// page says why when it cannot be drawn), the lint report against the
// source, and the previews.
Status WriteHtmlReport(const PlanOptions& o, const Design& in,
                       const std::vector<TableResult>& results, int64_t timestamp_ms,
                       std::vector<std::string> problems, AtomicFile* file) {
  HtmlReportInput page;
  page.problems = std::move(problems);
  page.design = &in;
  page.tables = &results;
  page.full = o.full;
  page.timestamp_ms = timestamp_ms;
  Status drawn =
      RenderDot(DesignDiagramDot(in.tables), "svg", "the diagram", [&page](std::string_view bytes) {
        page.diagram_svg.append(bytes);
        return Status::OK();
      });
  if (!drawn.ok()) {
    // The rest of the page is worth having: it says why, and so does stderr.
    page.diagram_svg.clear();
    page.diagram_error = drawn.message();
    std::fprintf(stderr, "widen: note: %s: the page has no diagram: %s\n", file->what().c_str(),
                 drawn.message().c_str());
  }
  LintOptions lo;
  lo.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  auto lint = Lint(in.mapping, in.source.get(), lo);
  if (lint.ok()) {
    page.lint = &*lint;
  } else {
    page.lint_error = lint.status().message();
  }
  WIDEN_RETURN_IF_ERROR(file->Write(RenderHtmlReport(page)));
  return file->Commit();
}

}  // namespace

int RunPlan(const PlanOptions& o) {
  DesignRequest dr;
  dr.mapping_path = o.mapping_path;
  dr.source_url = o.source_url;
  dr.only_table = o.only_table;
  dr.fetch_rows = o.fetch_rows;
  // The files first: a folder they cannot go to, or a path that is the
  // mapping, the other file or inside the mapping's embedded target store,
  // is named before the source is read.
  if (Status s = CheckOutputPaths({{"-m", o.mapping_path}},
                                  {{"--diagram", o.diagram_path}, {"--html", o.html_path}},
                                  o.mapping_path, "");
      !s.ok()) {
    return FailWith(s);
  }
  std::unique_ptr<DiagramFile> diagram;
  if (!o.diagram_path.empty()) {
    auto file = DiagramFile::Create(o.diagram_path);
    if (!file.ok()) return FailWith(file.status());
    diagram = std::move(file).value();
  }
  std::unique_ptr<AtomicFile> html;
  if (!o.html_path.empty()) {
    auto file = AtomicFile::Create(o.html_path, "--html");
    if (!file.ok()) return FailWith(file.status());
    html = std::move(file).value();
  }
  auto run = PreviewDesign(dr, o.full ? 0 : o.sample, o.limit, o.timestamp_ms);
  if (!run.ok()) return FailWith(run.status());
  const Design& in = *run->design;
  const std::vector<TableResult>& results = run->tables;
  const int64_t ts = run->timestamp_ms;
  if (diagram != nullptr) {
    if (Status s = diagram->Commit(DesignDiagramDot(in.tables)); !s.ok()) return FailWith(s);
  }
  uint64_t collisions = 0;
  for (const auto& r : results) collisions += r.preview.collisions;
  const std::vector<AccessView> access = AccessViews(in, results);
  size_t not_served = 0;
  for (const AccessView& v : access) not_served += v.proof.kind == AccessKind::kNotServed ? 1 : 0;
  if (html != nullptr) {
    std::vector<std::string> problems;
    if (collisions > 0) {
      problems.push_back(
          fmt::format("{} key collision(s): cells that would replace other cells (each table's "
                      "\"Key collisions\")",
                      collisions));
    }
    if (not_served > 0) {
      problems.push_back(
          fmt::format("{} access pattern(s) not served by any table's row key", not_served));
    }
    if (Status s = WriteHtmlReport(o, in, results, ts, std::move(problems), html.get()); !s.ok()) {
      return FailWith(s);
    }
  }
  if (o.format == "json") {
    std::string s =
        ToJson(o, in, results, access, ts).dump(2, ' ', false, Json::error_handler_t::replace);
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    std::string s;
    PrintText(o, in, results, access, &s);
    std::fwrite(s.data(), 1, s.size(), stdout);
  }
  std::fflush(stdout);
  if (collisions > 0) {
    std::fprintf(stderr,
                 "widen: %llu key collision(s): cells that would replace other cells (see "
                 "'collisions' above)\n",
                 static_cast<unsigned long long>(collisions));
  }
  if (not_served > 0) {
    std::fprintf(stderr,
                 "widen: %zu access pattern(s) not served by any table's row key (see 'access' "
                 "above)\n",
                 not_served);
  }
  return collisions > 0 || not_served > 0 ? kExitInvalid : kExitOk;
}

CommandRunner AddPlanCommand(CLI::App* app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* c = app->add_subcommand(
      "plan",
      "Dry run: show the rows, row key anatomy, statistics and key collisions the mapping "
      "gives, reading the source read-only; writes nothing");
  c->add_option("-m,--mapping", o->mapping_path, "Mapping YAML file")->required();
  c->add_option("--source", o->source_url, "Source URL, overrides the mapping's 'source'");
  c->add_option("--table", o->only_table, "Only this target table (ns:table)");
  c->add_option("--limit", o->limit, "Rows shown per table (0 = none)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{100000}));
  c->add_option("--sample", o->sample, "Source rows read per table for the statistics")
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()));
  c->add_flag("--full", o->full,
              "Read every source row: exact statistics and a complete collision check");
  c->add_option("--format", o->format, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  c->add_option("--diagram", o->diagram_path,
                "Also draw the design: FILE.dot, or FILE.svg/.png/.pdf (runs Graphviz's dot)")
      ->check(NonEmptyPath());
  c->add_option("--html", o->html_path,
                "Also write a design report to FILE: one self-contained HTML page with the "
                "diagram, each table's key anatomy, families, histograms, widest rows, "
                "collisions and lint findings")
      ->check(NonEmptyPath());
  c->add_option("--timestamp-ms", o->timestamp_ms,
                "Timestamp of every cell in ms since the epoch (default: the mapping's "
                "timestamp_ms, else now)")
      ->check(CLI::Range(kMinCellTimestampMs, kMaxCellTimestampMs));
  c->add_option("--fetch-rows", o->fetch_rows, "Rows per round trip from the source")
      ->check(CLI::Range(1, 1000000));
  return [o, c] { return c->parsed() ? RunPlan(*o) : -1; };
}

}  // namespace widen
