#include "transform/range_check.h"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "transform/cell_timestamp.h"

namespace widen {

namespace {

class RangeChecker {
 public:
  RangeChecker(const TablePlan& plan, Source* source) : plan_(plan), source_(source) {}

  Result<RangeReport> Run() {
    const TableMapping& t = *plan_.mapping;
    // Row key parts.
    if (plan_.key.form() == KeyForm::kText) {
      for (size_t i = 0; i < plan_.key.parts().size() && i < t.key.parts.size(); ++i) {
        WIDEN_RETURN_IF_ERROR(
            CheckWidth(plan_.scan, plan_.key.parts()[i], t.key.parts[i].loc, "key part"));
      }
    }
    // Version columns of the table and its columns.
    std::vector<int> seen;
    if (plan_.version_index >= 0) {
      WIDEN_RETURN_IF_ERROR(CheckVersion(plan_.scan, plan_.version_index, t.loc));
      seen.push_back(plan_.version_index);
    }
    for (size_t i = 0; i < plan_.cells.size() && i < t.columns.size(); ++i) {
      const int v = plan_.cells[i].version_index;
      if (v < 0 || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      WIDEN_RETURN_IF_ERROR(CheckVersion(plan_.scan, v, t.columns[i].loc));
    }
    // Nests: their id parts and version columns, depth first.
    std::vector<const NestPlan*> nests;
    for (const auto& n : plan_.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestPlan* n = nests[i];
      for (const auto& g : n->children) nests.push_back(&g);
      if (n->qualifier.form() == KeyForm::kText) {
        for (size_t j = 0; j < n->qualifier.parts().size() && j < n->spec->id.size(); ++j) {
          WIDEN_RETURN_IF_ERROR(CheckWidth(n->scan, n->qualifier.parts()[j], n->spec->id[j].loc,
                                           "nested id", fmt::format(" (prefix '{}')", n->prefix)));
        }
      }
      if (n->version_index >= 0) {
        WIDEN_RETURN_IF_ERROR(CheckVersion(n->scan, n->version_index, n->spec->loc));
      }
    }
    return std::move(report_);
  }

 private:
  // The summary of column `index` of `scan`; nullptr (with a note) when the
  // source cannot summarize it.
  Result<std::optional<ColumnSummary>> Summarize(const ScanSpec& scan, size_t index,
                                                 const std::string& what) {
    auto s = source_->SummarizeColumn(scan, scan.columns[index]);
    if (!s.ok()) {
      if (s.status().code() != StatusCode::kInvalidArgument) return s.status();
      report_.notes.push_back(fmt::format("{}: the range of {} was not checked: {}",
                                          plan_.descriptor.FullName(), what, s.status().message()));
      return std::optional<ColumnSummary>();
    }
    return std::optional<ColumnSummary>(std::move(*s));
  }

  static std::string ColumnName(const ScanSpec& scan, size_t index) {
    const ColumnExpr& c = scan.columns[index];
    return c.alias.empty() ? c.column : c.alias + "." + c.column;
  }

  // `what` names the part ("key part"), `where` follows its name (" (prefix 'o')").
  Status CheckWidth(const ScanSpec& scan, const KeyPartPlan& p, const SourceLocation& loc,
                    const std::string& what, const std::string& where = "") {
    if (p.is_literal || p.reverse || p.width <= 0) return Status::OK();
    const std::string column = ColumnName(scan, p.index);
    WIDEN_ASSIGN_OR_RETURN(std::optional<ColumnSummary> s,
                           Summarize(scan, p.index, fmt::format("{} '{}'{}", what, p.name, where)));
    if (!s || s->min.is_null() || !IsIntegerType(s->min.type())) return Status::OK();
    const bool negative = s->min.type() == ValueType::kInt && s->min.as_int() < 0;
    const std::string max_digits = s->max.ToText();
    const bool wide = s->max.type() == ValueType::kUInt ||
                              (s->max.type() == ValueType::kInt && s->max.as_int() >= 0)
                          ? max_digits.size() > static_cast<size_t>(p.width)
                          : false;
    if (!negative && !wide) return Status::OK();
    std::string why;
    if (negative && wide) {
      why = fmt::format("values below 0 and above {}", std::string(p.width, '9'));
    } else if (negative) {
      why = "negative values";
    } else {
      why = fmt::format("values above {}", std::string(p.width, '9'));
    }
    RangeFinding f;
    f.kind = RangeFinding::Kind::kKeyWidth;
    f.loc = loc;
    f.message = fmt::format(
        "{} '{}'{} has width {}, but source column {} goes from {} to {}: rows with {} are "
        "rejected (in a text key they would sort out of order: {})",
        what, p.name, where, p.width, column, s->min.ToText(), s->max.ToText(), why,
        negative ? "-005 after -010"
                 : fmt::format("{} before {}", "1" + std::string(p.width, '0'),
                               std::string(p.width, '9')));
    f.fix = negative ? fmt::format("use form: binary, which orders negative numbers{}",
                                   wide ? fmt::format(" (or leave those rows out with 'where' "
                                                      "and raise the width to {})",
                                                      max_digits.size())
                                        : " (or leave those rows out with 'where')")
                     : fmt::format("raise the width to {} (the digits of {})", max_digits.size(),
                                   max_digits);
    report_.findings.push_back(std::move(f));
    return Status::OK();
  }

  Status CheckVersion(const ScanSpec& scan, int index, const SourceLocation& loc) {
    const std::string column = ColumnName(scan, static_cast<size_t>(index));
    WIDEN_ASSIGN_OR_RETURN(std::optional<ColumnSummary> s,
                           Summarize(scan, static_cast<size_t>(index), "version column " + column));
    if (!s || s->min.is_null()) return Status::OK();
    // CellTimestampMs says why a value is not a cell timestamp; OK ends stay "".
    int64_t ms;
    std::string low, high;
    CellTimestampMs(s->min, &ms, &low);
    CellTimestampMs(s->max, &ms, &high);
    if (low.empty() && high.empty()) return Status::OK();
    std::string which = !low.empty() ? "goes back to " + low : "";
    if (!high.empty()) which += (which.empty() ? "reaches " : " and reaches ") + high;
    RangeFinding f;
    f.kind = RangeFinding::Kind::kVersionTime;
    f.loc = loc;
    f.message = fmt::format(
        "version column {} {}; rows whose version is no cell timestamp (0 to {} ms since "
        "1970) are rejected",
        column, which, kMaxCellTimestampMs);
    const bool integer = IsIntegerType(s->min.type()) || IsIntegerType(s->max.type());
    f.fix = integer ? "leave those rows out with 'where' (e.g. the column >= 0), or take the "
                      "timestamp from another column"
                    : "leave those rows out with 'where' (e.g. the column >= '1970-01-01'), or "
                      "take the timestamp from another column";
    report_.findings.push_back(std::move(f));
    return Status::OK();
  }

  const TablePlan& plan_;
  Source* source_;
  RangeReport report_;
};

}  // namespace

Result<RangeReport> CheckValueRanges(const TablePlan& plan, Source* source) {
  return RangeChecker(plan, source).Run();
}

}  // namespace widen
