// The page `widen plan --html FILE` writes: one self-contained HTML file
// (inline CSS and SVG, one small inline script that only notes load
// errors; no URL to fetch, enforced by a Content-Security-Policy of
// default-src 'none') showing the design a plan computed: the design
// diagram (Graphviz's SVG, inlined), then per target table its families,
// the row key drawn as byte ranges, how it syncs, statistics with
// histograms of row size, cells per row and value size (log2 buckets, drawn
// as SVG bars here), the widest rows, key collisions, rejects, value range
// findings and the lint findings of the table. Every text from the mapping,
// the source or the data is HTML-escaped. docs/plan.md, "The HTML report".
//
// Thread safety: a pure function of its input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cmd/run.h"
#include "transform/lint.h"

namespace widen {

/// What the report shows; every pointer is borrowed for the call.
struct HtmlReportInput {
  const Design* design = nullptr;                           // the plan's design
  const std::vector<TablePreviewResult>* tables = nullptr;  // PreviewDesign's, in mapping order
  /// The lint report of the mapping against the source; null when lint
  /// could not run (`lint_error` says why).
  const LintReport* lint = nullptr;
  std::string lint_error;
  /// Graphviz's SVG of the design (DesignDiagramDot through `dot -Tsvg`);
  /// empty when it could not be drawn (`diagram_error` says why).
  std::string diagram_svg;
  std::string diagram_error;
  bool full = false;         // every source row read (else a sample)
  int64_t timestamp_ms = 0;  // the cells' timestamp the preview used
  /// What makes `widen plan` fail (exit 2), one sentence each: key
  /// collisions, access patterns no row key serves. Shown at the top.
  std::vector<std::string> problems;
};

/// The whole page, UTF-8. Each target table is a <section class="table">
/// whose id is "table-" followed by its name (ns:table) with every
/// character outside [A-Za-z0-9_-] written as "-" and its byte in hex.
std::string RenderHtmlReport(const HtmlReportInput& input);

/// `text` with &, <, >, " and ' written as character references.
std::string HtmlEscape(std::string_view text);

}  // namespace widen
