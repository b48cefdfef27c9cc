// Diagram: the design of planned target tables as a Graphviz DOT graph,
// drawn the way HBase practitioners sketch a table — one box per target
// table with the row key's parts (types, widths, salt), then each column
// family as a box holding its columns, and each nested entity as a box inside
// its family with its qualifier prefix, id parts and value attributes (a
// second nesting level inside the first). Source tables are drawn on the
// left with edges to where their rows land: the driving table (one target
// row per source row), joined tables (copied in: denormalization) and nested
// tables (into a family). One source feeding several targets shows the
// duplication.
//
// `widen plan --diagram FILE.dot` writes this text; FILE.svg runs Graphviz's
// `dot -Tsvg` on it.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "transform/plan.h"

namespace widen {

/// DOT text for `tables` (each must outlive the call).
std::string DesignDiagramDot(const std::vector<const TablePlan*>& tables);

/// Escapes text for a Graphviz HTML-like label (& < > " ').
std::string DotHtmlEscape(const std::string& text);

}  // namespace widen
