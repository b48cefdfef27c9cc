#include "cmd/html_report.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "cmd/design_util.h"
#include "common/bytes.h"
#include "common/temporal.h"
#include "extract/source.h"
#include "transform/key_anatomy.h"

namespace widen {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Short for HtmlEscape.
std::string E(std::string_view text) { return HtmlEscape(text); }

std::string SectionId(const std::string& name) {
  std::string id = "table-";
  for (unsigned char c : name) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '-') {
      id += static_cast<char>(c);
    } else {
      id += fmt::format("-{:02x}", c);
    }
  }
  return id;
}

constexpr const char* kStyle = R"(
:root{--ink:#1d2430;--muted:#5b6472;--line:#d9dee6;--bg:#f6f7f9;--card:#fff;--accent:#2f6fdf;
--salt:#e9a23b;--hash:#c06fd9;--literal:#8c96a5;--column:#3f8fdf;--separator:#c4cad3;--bar:#3f8fdf;
--warn:#b56a00;--err:#c62828;--info:#2f6fdf}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:var(--bg)}
header{background:#1d2430;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:20px;font-weight:600}
header .meta{color:#c9d1dc;font-size:13px}
main{max-width:1180px;margin:0 auto;padding:18px 28px 40px}
nav{margin:0 0 16px}
nav a{display:inline-block;margin:0 6px 6px 0;padding:3px 10px;border:1px solid var(--line);
border-radius:14px;background:var(--card);color:var(--accent);text-decoration:none;font-size:13px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 20px;
margin:0 0 18px}
h2{margin:0 0 10px;font-size:18px}
h3{margin:16px 0 6px;font-size:14px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
table.grid{border-collapse:collapse;width:100%;font-size:13px}
table.grid th,table.grid td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;
vertical-align:top}
table.grid th{color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px 10px;
white-space:pre-wrap;word-break:break-word;margin:4px 0}
.diagram{overflow:auto;max-height:720px;text-align:center}
.diagram svg{max-width:100%;height:auto}
.keybar{display:flex;width:100%;border:1px solid var(--ink);border-radius:4px;overflow:hidden;
margin:6px 0 4px;min-height:54px}
.piece{padding:5px 6px;color:#fff;font-size:12px;line-height:1.25;min-width:64px;
border-right:1px solid rgba(255,255,255,.7);overflow:hidden}
.piece:last-child{border-right:0}
.piece b{display:block;font-size:13px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.piece.salt{background:var(--salt)}.piece.hash{background:var(--hash)}
.piece.literal{background:var(--literal)}.piece.column{background:var(--column)}
.piece.separator{background:var(--separator);color:var(--ink);min-width:22px}
.piece.var{background-image:repeating-linear-gradient(135deg,transparent 0 8px,
rgba(255,255,255,.18) 8px 16px)}
.offsets{display:flex;justify-content:space-between;color:var(--muted);font-size:11px}
.charts{display:flex;flex-wrap:wrap;gap:14px}
.chart{flex:1 1 340px;border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.chart h4{margin:0 0 4px;font-size:13px}
.chart .sum{color:var(--muted);font-size:12px}
.chart svg{width:100%;height:auto;display:block}
.chart rect.b{fill:var(--bar)}
.chart text{font-size:10px;fill:var(--muted)}
.finding{border-left:4px solid var(--warn);padding:4px 10px;margin:6px 0;background:#fffaf2}
.finding.error{border-color:var(--err);background:#fff5f5}
.finding.info{border-color:var(--info);background:#f4f8ff}
.finding .fix{color:var(--muted)}
.sev{font-weight:600;text-transform:uppercase;font-size:11px;margin-right:6px}
.ok{color:#2e7d32;font-weight:600}.bad{color:var(--err);font-weight:600}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;font-size:13px}
.kv dt{color:var(--muted)}.kv dd{margin:0}
.note{color:var(--muted);font-size:12px}
.problems{margin-top:10px;padding:6px 12px;background:#fff5f5;color:#611;border-radius:6px;font-size:13px}
.problems ul{margin:4px 0 0 18px;padding:0}
)";

// The banner of what makes plan fail (HtmlReportInput::problems); "" when
// nothing does.
std::string Problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return "";
  std::string out = "<div class=\"problems\"><b>widen plan fails (exit 2):</b><ul>";
  for (const std::string& p : problems) out += "<li>" + E(p) + "</li>";
  return out + "</ul></div>";
}

// A count as text with thousands separators ("12,345").
std::string Count(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// A power of two for an axis: 1, 2, ... 512, 1K, ... 512K, 1M, ...
std::string Pow2Label(int exponent) {
  static const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  return fmt::format("{}{}", uint64_t{1} << (exponent % 10), kUnits[exponent / 10]);
}

// A histogram of `s` (log2 buckets) as an SVG bar chart.
std::string Histogram(const char* title, const char* unit, const SizeStats& s) {
  std::string out = fmt::format("<div class=\"chart\"><h4>{}</h4>", E(title));
  if (s.count == 0) return out + "<p class=\"note\">no values in the sample</p></div>";
  out += fmt::format("<div class=\"sum\">{} values: min {}, avg {:.1f}, max {} {}</div>",
                     Count(s.count), Count(s.min), s.avg(), Count(s.max), unit);
  const int lo = std::bit_width(s.min), hi = std::bit_width(s.max);
  const int n = hi - lo + 1;
  uint64_t top = 1;
  for (int b = lo; b <= hi; ++b) top = std::max(top, s.log2_buckets[static_cast<size_t>(b)]);
  constexpr int kWidth = 360, kHeight = 150, kLeft = 34, kBottom = 30, kTop = 8;
  const double slot = static_cast<double>(kWidth - kLeft - 4) / n;
  out += fmt::format(
      "<svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} histogram\">"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#8c96a5\"/>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>",
      kWidth, kHeight, E(title), kLeft, kHeight - kBottom, kWidth - 4, kHeight - kBottom, kLeft - 4,
      kTop + 8, Count(top), kLeft - 4, kHeight - kBottom);
  const int label_every = n > 12 ? (n + 11) / 12 : 1;
  for (int b = lo; b <= hi; ++b) {
    const uint64_t c = s.log2_buckets[static_cast<size_t>(b)];
    const double h = static_cast<double>(kHeight - kBottom - kTop) * static_cast<double>(c) /
                     static_cast<double>(top);
    const double x = kLeft + 2 + slot * (b - lo);
    const std::string range = b == 0 ? "0"
                              : b == 1
                                  ? "1"
                                  : fmt::format("{}-{}", Pow2Label(b - 1), (uint64_t{1} << b) - 1);
    out += fmt::format(
        "<rect class=\"b\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\">"
        "<title>{} {}: {}</title></rect>",
        x, kHeight - kBottom - h, std::max(1.0, slot - 2), h, range, unit, Count(c));
    if ((b - lo) % label_every == 0) {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         x + slot / 2 - 1, kHeight - kBottom + 12, b == 0 ? "0" : Pow2Label(b - 1));
    }
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} (from)</text>",
                     kLeft + (kWidth - kLeft) / 2, kHeight - 4, unit);
  return out + "</svg></div>";
}

std::string BytesRange(int min, int max) {
  if (max < 0) return fmt::format("{}+ B", min);
  if (min == max) return fmt::format("{} B", min);
  return fmt::format("{}-{} B", min, max);
}

const char* PieceClass(KeyPieceAnatomy::Kind k) {
  switch (k) {
    case KeyPieceAnatomy::Kind::kSalt:
      return "salt";
    case KeyPieceAnatomy::Kind::kHash:
      return "hash";
    case KeyPieceAnatomy::Kind::kLiteral:
      return "literal";
    case KeyPieceAnatomy::Kind::kColumn:
      return "column";
    case KeyPieceAnatomy::Kind::kSeparator:
      return "separator";
  }
  return "column";
}

// The row key as a bar of byte ranges, and its pieces as a table.
std::string KeyAnatomyHtml(const KeyAnatomy& a) {
  std::string out = fmt::format(
      "<p>{} key, {}{}: <code>{}</code></p><div class=\"keybar\">", E(KeyFormNames().Name(a.form)),
      E(BytesRange(a.min_bytes, a.max_bytes)),
      a.form == KeyForm::kText ? ", separator <code>" + E(ToStringBinary(a.separator)) + "</code>"
                               : "",
      E(a.compact));
  for (const auto& p : a.pieces) {
    const bool var = p.max_bytes < 0 || p.max_bytes != p.min_bytes;
    const int grow = p.max_bytes > 0 ? std::min(p.max_bytes, 64) : std::max(p.min_bytes, 1) + 12;
    const std::string type = p.type.empty() ? KeyAnatomy::KindName(p.kind) : p.type;
    out += fmt::format(
        "<div class=\"piece {}{}\" style=\"flex-grow:{}\" title=\"{}\"><b>{}</b>{}<br>{}</div>",
        PieceClass(p.kind), var ? " var" : "", grow, E(p.encoding), E(p.name),
        E(BytesRange(p.min_bytes, p.max_bytes)),
        p.kind == KeyPieceAnatomy::Kind::kSeparator ? "" : E(type));
  }
  out += fmt::format("</div><div class=\"offsets\"><span>byte 0</span><span>{}</span></div>",
                     a.max_bytes < 0 ? "length varies" : fmt::format("{} bytes", a.max_bytes));
  out +=
      "<table class=\"grid\"><tr><th>offset</th><th>bytes</th><th>part</th><th>type</th>"
      "<th>source</th><th>encoding</th></tr>";
  for (const auto& p : a.pieces) {
    if (p.kind == KeyPieceAnatomy::Kind::kSeparator) continue;
    std::string src = p.column;
    if (!p.source_type.empty()) src += " (" + p.source_type + ")";
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>",
        p.offset < 0 ? "var" : std::to_string(p.offset), E(BytesRange(p.min_bytes, p.max_bytes)),
        E(p.name), E(p.type.empty() ? KeyAnatomy::KindName(p.kind) : p.type),
        src.empty() ? "-" : E(src), E(p.encoding));
  }
  return out + "</table>";
}

std::string FindingHtml(const LintFinding& f) {
  const std::string sev = SeverityName(f.severity);
  return fmt::format(
      "<div class=\"finding {}\"><span class=\"sev\">{} {}</span><code>{}</code> {}{}{}</div>",
      E(sev), E(sev), E(f.rule), E(f.loc.ToString()), f.table.empty() ? "" : E(f.table) + ": ",
      E(f.message), f.fix.empty() ? "" : "<div class=\"fix\">fix: " + E(f.fix) + "</div>");
}

void TableSection(const HtmlReportInput& in, const TablePreviewResult& r, std::string* out) {
  const TablePlan& tp = *r.plan;
  const TablePreview& p = r.preview;
  const std::string name = tp.descriptor.FullName();
  *out +=
      fmt::format("<section class=\"table card\" id=\"{}\"><h2>{}</h2>", SectionId(name), E(name));
  const std::string from = tp.scan.table.empty() ? "query '" + tp.scan.alias + "'" : tp.scan.table;
  *out += fmt::format(
      "<dl class=\"kv\"><dt>source</dt><dd>{}{}</dd><dt>key order</dt><dd>{}: {}</dd></dl>",
      E(from),
      p.estimated_rows >= 0 ? fmt::format(" (about {} rows by the source's statistics)",
                                          Count(static_cast<uint64_t>(p.estimated_rows)))
                            : "",
      E(KeyOrderName(tp.order.how)), E(tp.order.why));

  *out += "<h3>Row key</h3>" + KeyAnatomyHtml(r.anatomy);

  *out +=
      "<h3>Families</h3><table class=\"grid\"><tr><th>family</th><th>versions</th><th>TTL</th>"
      "<th>compression</th><th>bloom filter</th><th class=\"num\">cells</th>"
      "<th class=\"num\">bytes</th></tr>";
  for (const auto& f : tp.descriptor.families) {
    uint64_t cells = 0, bytes = 0;
    for (const auto& s : p.families) {
      if (s.name == f.name) {
        cells = s.cells;
        bytes = s.bytes;
      }
    }
    *out += fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        E(f.name), f.versions, f.ttl_seconds > 0 ? std::to_string(f.ttl_seconds) + " s" : "forever",
        E(f.compression), E(f.bloom_filter), Count(cells),
        E(HumanBytes(static_cast<double>(bytes))));
  }
  *out += "</table>";

  *out += fmt::format(
      "<h3>Statistics</h3><p>{}: {} rows written ({} row keys), {} cells, {}; {} rejected, {} "
      "empty{}.</p>",
      p.complete ? fmt::format("all {} source rows", Count(p.driving_rows))
                 : fmt::format("a sample of the first {} source rows", Count(p.driving_rows)),
      Count(p.run.rows), Count(p.row_keys), Count(p.run.cells),
      E(HumanBytes(static_cast<double>(p.run.bytes))), Count(p.run.rejected),
      Count(p.run.empty_rows),
      p.estimated_total_bytes >= 0
          ? fmt::format("; the whole table about {}",
                        E(HumanBytes(static_cast<double>(p.estimated_total_bytes))))
          : "");
  *out += "<div class=\"charts\">" + Histogram("Row size", "bytes", p.row_bytes) +
          Histogram("Cells per row", "cells", p.cells_per_row) +
          Histogram("Value size", "bytes", p.value_bytes) + "</div>";

  *out += "<h3>Widest rows</h3>";
  if (p.widest.empty()) {
    *out += "<p class=\"note\">none</p>";
  } else {
    *out +=
        "<table class=\"grid\"><tr><th>row key</th><th>source row</th><th class=\"num\">cells</th>"
        "<th class=\"num\">bytes</th></tr>";
    for (const auto& w : p.widest) {
      *out += fmt::format(
          "<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td></tr>",
          E(ToStringBinary(w.key)), E(w.source_id), Count(w.cells), Count(w.bytes));
    }
    *out += "</table>";
  }

  *out += "<h3>Key collisions</h3>";
  if (p.collisions == 0) {
    *out += fmt::format("<p class=\"ok\">none{}</p>",
                        p.complete ? "" : " in the sample (plan --full checks every row)");
  } else {
    *out += fmt::format(
        "<p class=\"bad\">{}{} cell(s) would replace another cell{}</p><table class=\"grid\">"
        "<tr><th>row key</th><th>column</th><th>first source row</th><th>second</th></tr>",
        p.collisions_exact ? "" : "at least ", Count(p.collisions),
        p.collision_examples.size() < p.collisions
            ? fmt::format(" (the first {} shown)", p.collision_examples.size())
            : "");
    for (const auto& c : p.collision_examples) {
      *out += fmt::format(
          "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
          E(ToStringBinary(c.row_key)), E(c.column), E(c.first_source), E(c.second_source));
    }
    *out += "</table>";
  }
  if (!p.reject_examples.empty()) {
    *out += "<h3>Rejected rows</h3><table class=\"grid\"><tr><th>source row</th><th>why</th></tr>";
    for (const auto& rj : p.reject_examples) {
      *out += fmt::format("<tr><td>{}</td><td>{}</td></tr>", E(rj.source_id), E(rj.reason));
    }
    *out += "</table>";
  }

  std::string findings;
  for (const auto& f : r.ranges.findings) {
    findings += fmt::format(
        "<div class=\"finding\"><span class=\"sev\">range</span><code>{}</code> {}{}</div>",
        E(f.loc.ToString()), E(f.message),
        f.fix.empty() ? "" : "<div class=\"fix\">fix: " + E(f.fix) + "</div>");
  }
  if (in.lint != nullptr) {
    for (const auto& f : in.lint->findings) {
      if (f.table == name) findings += FindingHtml(f);
    }
  }
  *out += "<h3>Findings</h3>" + (findings.empty() ? "<p class=\"ok\">none</p>" : findings);

  *out += "<h3>Queries</h3>";
  *out += "<pre>" + E(in.design->source->SelectSql(tp.scan)) + "</pre>";
  std::vector<const NestPlan*> nests;
  for (const auto& n : tp.nests) nests.push_back(&n);
  for (size_t i = 0; i < nests.size(); ++i) {
    *out += "<pre>" + E(in.design->source->SelectSql(nests[i]->scan)) + "</pre>";
    for (const auto& c : nests[i]->children) nests.push_back(&c);
  }
  *out += "</section>";
}

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& in) {
  const Design& d = *in.design;
  std::string out;
  out.reserve(1 << 16);
  const std::string title = "widen plan: " + d.mapping.file;
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  // Nothing may be fetched: no URL, no font, no image from anywhere.
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + E(title) + "</title><style>" + kStyle + "</style>";
  // The page needs no script; this one only records load errors, for tests
  // and for whoever opens the browser's inspector.
  out +=
      "<script>(function(){var errors=[];function note(m){errors.push(m);"
      "document.documentElement.setAttribute('data-errors',errors.join(' | '));}"
      "window.addEventListener('error',function(e){note(e.message||('cannot load '+"
      "((e.target&&(e.target.src||e.target.href))||'a resource')));},true);"
      "document.addEventListener('securitypolicyviolation',function(e){note('blocked '+"
      "e.blockedURI);});window.addEventListener('load',function(){"
      "document.documentElement.setAttribute('data-loaded','yes');});})();</script>";
  out += "</head><body>";
  uint64_t rows = 0;
  bool complete = true;  // every driving row read (--full, or a sample larger than the table)
  for (const auto& r : *in.tables) {
    rows += r.preview.driving_rows;
    complete = complete && r.preview.complete;
  }
  out += fmt::format(
      "<header><h1>{}</h1><div class=\"meta\">source {} &middot; {} target table(s) &middot; {} "
      "&middot; cell timestamp {} ms ({} UTC)</div>{}</header><main>",
      E(title), E(MaskUrl(d.mapping.source_url)), in.tables->size(),
      in.full || complete ? fmt::format("every source row read ({} driving rows)", Count(rows))
                          : fmt::format("statistics from a sample ({} driving rows)", Count(rows)),
      in.timestamp_ms, E(MsText(in.timestamp_ms)), Problems(in.problems));

  out += "<nav>";
  for (const auto& r : *in.tables) {
    const std::string name = r.plan->descriptor.FullName();
    out += fmt::format("<a href=\"#{}\">{}</a>", SectionId(name), E(name));
  }
  out += "<a href=\"#lint\">lint</a></nav>";

  out += "<section class=\"card\" id=\"diagram\"><h2>Design</h2>";
  if (!in.diagram_svg.empty()) {
    // dot's SVG without its XML declaration and DOCTYPE: inline SVG in HTML.
    const size_t svg = in.diagram_svg.find("<svg");
    out += "<div class=\"diagram\">" +
           (svg == std::string::npos ? in.diagram_svg : in.diagram_svg.substr(svg)) + "</div>";
  } else {
    out += "<p class=\"note\">No diagram: " + E(in.diagram_error) + "</p>";
  }
  out += "</section>";

  out += "<section class=\"card\" id=\"lint\"><h2>Lint</h2>";
  if (in.lint == nullptr) {
    out += "<p class=\"note\">Lint did not run: " + E(in.lint_error) + "</p>";
  } else {
    // The findings about the mapping and the tables shown (all, or --table's).
    std::vector<const LintFinding*> shown;
    for (const auto& f : in.lint->findings) {
      bool ours = f.table.empty();
      for (const auto& r : *in.tables) ours = ours || r.plan->descriptor.FullName() == f.table;
      if (ours) shown.push_back(&f);
    }
    int counts[3] = {0, 0, 0};  // by Severity
    for (const LintFinding* f : shown) ++counts[static_cast<int>(f->severity)];
    out += fmt::format(
        "<p>{} error(s), {} warning(s), {} info</p>", counts[static_cast<int>(Severity::kError)],
        counts[static_cast<int>(Severity::kWarning)], counts[static_cast<int>(Severity::kInfo)]);
    for (const LintFinding* f : shown) out += FindingHtml(*f);
    const LintReport& l = *in.lint;
    for (const auto& n : l.notes) out += "<p class=\"note\">" + E(n) + "</p>";
  }
  out += "</section>";

  for (const auto& r : *in.tables) TableSection(in, r, &out);
  out += "<p class=\"note\">Written by widen plan --html; docs/plan.md describes each part.</p>";
  out += "</main></body></html>\n";
  return out;
}

}  // namespace widen
