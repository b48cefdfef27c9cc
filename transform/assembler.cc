#include "transform/assembler.h"

#include <chrono>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace widen {

namespace {

int CompareKeys(const Row& a, const std::vector<size_t>& ai, const Row& b,
                const std::vector<size_t>& bi) {
  for (size_t i = 0; i < ai.size(); ++i) {
    int c = CompareValues(a[ai[i]], b[bi[i]]);
    if (c != 0) return c;
  }
  return 0;
}

bool AnyNull(const Row& r, const std::vector<size_t>& idx) {
  for (size_t i : idx) {
    if (r[i].is_null()) return true;
  }
  return false;
}

std::string DescribeKey(const Row& r, const std::vector<size_t>& idx) {
  std::string s;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (i) s += ", ";
    s += r[idx[i]].DebugString();
  }
  return s;
}

// Appends a value to a JSON object under `name`: numbers as numbers, exact
// decimals and temporal values as their text, bytes as "\x" + hex.
void PutJson(nlohmann::ordered_json* obj, const std::string& name, const Value& v) {
  if (v.is_null()) {
    (*obj)[name] = nullptr;
    return;
  }
  switch (v.type()) {
    case ValueType::kBool:
      (*obj)[name] = v.as_bool();
      return;
    case ValueType::kInt:
      (*obj)[name] = v.as_int();
      return;
    case ValueType::kUInt:
      (*obj)[name] = v.as_uint();
      return;
    case ValueType::kFloat:
      if (std::isfinite(v.as_double())) {
        (*obj)[name] = v.as_double();
      } else {
        (*obj)[name] = v.ToText();
      }
      return;
    case ValueType::kBytes: {
      static const char kHex[] = "0123456789abcdef";
      std::string s = "\\x";
      for (unsigned char c : v.as_bytes()) {
        s.push_back(kHex[c >> 4]);
        s.push_back(kHex[c & 15]);
      }
      (*obj)[name] = std::move(s);
      return;
    }
    case ValueType::kJson:
      try {
        (*obj)[name] = nlohmann::ordered_json::parse(v.as_bytes());
      } catch (const std::exception&) {
        (*obj)[name] = std::string(v.as_bytes());
      }
      return;
    default:
      (*obj)[name] = v.ToText();
      return;
  }
}

class TableAssembler {
 public:
  TableAssembler(const TablePlan& plan, Source* source, CellSink* sink,
                 const AssembleOptions& options, TableStats* stats)
      : plan_(plan), source_(source), sink_(sink), options_(options), stats_(stats) {}

  Status Run() {
    WIDEN_ASSIGN_OR_RETURN(auto rows, source_->Scan(plan_.scan));
    for (const auto& n : plan_.nests) {
      WIDEN_ASSIGN_OR_RETURN(auto s, source_->Scan(n.scan));
      children_.push_back(Child{&n, std::move(s), Row(), false});
    }
    bool have_prev_parent = false;
    Row prev_parent;
    for (; rows->Valid(); rows->Next()) {
      const Row& row = rows->row();
      ++stats_->source_rows;
      if (!plan_.nests.empty()) {
        const auto& pk = plan_.nests.front().parent_key;
        if (have_prev_parent && !AnyNull(row, pk) && !AnyNull(prev_parent, pk)) {
          int c = CompareKeys(prev_parent, pk, row, pk);
          if (c > 0) return OutOfOrder("driving", plan_.scan.table, row, pk);
          if (c == 0) {
            return Status::InvalidArgument(fmt::format(
                "table '{}': nest parent columns of '{}' repeat the value ({}); they must "
                "identify one row (use the primary key)",
                plan_.descriptor.FullName(), plan_.scan.table, DescribeKey(row, pk)));
          }
        }
        prev_parent = row;
        have_prev_parent = true;
      }
      WIDEN_RETURN_IF_ERROR(EmitRow(row));
      if (options_.progress && stats_->rows % options_.progress_rows == 0) {
        options_.progress(*stats_);
      }
    }
    WIDEN_RETURN_IF_ERROR(rows->status());
    // Children past the last parent are orphans; read them to count them.
    for (auto& ch : children_) {
      for (; ch.stream->Valid(); ch.stream->Next()) {
        ++stats_->source_rows;
        ++stats_->orphans;
      }
      WIDEN_RETURN_IF_ERROR(ch.stream->status());
    }
    return Status::OK();
  }

 private:
  struct Child {
    const NestPlan* plan;
    std::unique_ptr<RowStream> stream;
    Row prev;
    bool has_prev;
  };

  std::string RowId(const Row& row) const {
    std::string s;
    for (const auto& [name, idx] : plan_.identity) {
      if (!s.empty()) s += ", ";
      s += name + "=" + row[idx].DebugString();
    }
    return s.empty() ? "(no primary key)" : s;
  }

  Status Reject(const Row& row, const std::string& reason) {
    if (options_.rejects == nullptr) {
      return Status::InvalidArgument(fmt::format("table '{}': source row {} of '{}': {}",
                                                 plan_.descriptor.FullName(), RowId(row),
                                                 plan_.scan.table, reason));
    }
    ++stats_->rejected;
    return options_.rejects->Reject(plan_.descriptor.FullName(), RowId(row), reason);
  }

  Status OutOfOrder(const char* which, const std::string& table, const Row& row,
                    const std::vector<size_t>& key) {
    return Status::Internal(fmt::format(
        "table '{}': the {} rows of '{}' arrived out of order at key ({}); the source's sort "
        "order differs from widen's comparison, so nesting cannot be merged safely",
        plan_.descriptor.FullName(), which, table, DescribeKey(row, key)));
  }

  // Buffers one cell of the current row; the strings keep their capacity
  // from row to row, so steady state does not allocate.
  void Put(std::string_view family, std::string_view qualifier, std::string_view value) {
    if (pending_n_ == pending_.size()) pending_.emplace_back();
    PendingCell& p = pending_[pending_n_++];
    p.family.assign(family);
    p.qualifier.assign(qualifier);
    p.value.assign(value);
  }

  Status EmitRow(const Row& row) {
    key_.clear();
    if (Status s = plan_.key.Encode(row, &key_); !s.ok()) {
      WIDEN_RETURN_IF_ERROR(Reject(row, s.message()));
      return SkipChildren(row);
    }
    // Cells are collected first so that a rejected row writes nothing.
    pending_n_ = 0;
    for (const CellPlan& c : plan_.cells) {
      const Value& v = row[c.index];
      if (v.is_null()) {
        if (c.on_null == NullPolicy::kOmit) continue;
        if (c.on_null == NullPolicy::kReject) {
          WIDEN_RETURN_IF_ERROR(Reject(row, fmt::format("column {} is NULL", c.column)));
          return SkipChildren(row);
        }
        Put(c.family, c.qualifier, "");
        continue;
      }
      value_.clear();
      v.AppendText(&value_);
      Put(c.family, c.qualifier, value_);
    }
    for (auto& ch : children_) WIDEN_RETURN_IF_ERROR(EmitChildren(row, &ch));
    for (size_t i = 0; i < pending_n_; ++i) {
      const PendingCell& p = pending_[i];
      CellView cell{key_, p.family, p.qualifier, options_.timestamp_ms, CellType::kPut, p.value};
      WIDEN_RETURN_IF_ERROR(sink_->Put(cell));
      ++stats_->cells;
      stats_->bytes += key_.size() + p.family.size() + p.qualifier.size() + p.value.size();
    }
    ++stats_->rows;
    return Status::OK();
  }

  // Advances the child streams past the children of a rejected parent row.
  Status SkipChildren(const Row& row) {
    for (auto& ch : children_) {
      const NestPlan& n = *ch.plan;
      if (AnyNull(row, n.parent_key)) continue;
      while (ch.stream->Valid() &&
             CompareKeys(ch.stream->row(), n.child_key, row, n.parent_key) <= 0) {
        ++stats_->source_rows;
        ch.stream->Next();
      }
      WIDEN_RETURN_IF_ERROR(ch.stream->status());
    }
    return Status::OK();
  }

  Status EmitChildren(const Row& parent, Child* ch) {
    const NestPlan& n = *ch->plan;
    if (AnyNull(parent, n.parent_key)) return Status::OK();
    RowStream* s = ch->stream.get();
    while (s->Valid()) {
      const Row& child = s->row();
      if (ch->has_prev && CompareKeys(ch->prev, n.child_key, child, n.child_key) > 0) {
        return OutOfOrder("child", n.scan.table, child, n.child_key);
      }
      int c = CompareKeys(child, n.child_key, parent, n.parent_key);
      if (c > 0) break;
      ch->prev = child;
      ch->has_prev = true;
      ++stats_->source_rows;
      if (c < 0) {
        ++stats_->orphans;
      } else {
        qualifier_ = n.prefix;
        if (Status st = n.qualifier.Encode(child, &qualifier_); !st.ok()) {
          return Status::InvalidArgument(
              fmt::format("table '{}': nested row of '{}' under source row {}: {}",
                          plan_.descriptor.FullName(), n.scan.table, RowId(parent), st.message()));
        }
        nlohmann::ordered_json obj = nlohmann::ordered_json::object();
        for (const auto& [name, idx] : n.value_columns) PutJson(&obj, name, child[idx]);
        Put(n.family, qualifier_,
            obj.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      }
      s->Next();
    }
    return s->status();
  }

  struct PendingCell {
    std::string family, qualifier, value;
  };

  const TablePlan& plan_;
  Source* source_;
  CellSink* sink_;
  const AssembleOptions& options_;
  TableStats* stats_;
  std::vector<Child> children_;
  std::string key_, value_, qualifier_;
  std::vector<PendingCell> pending_;
  size_t pending_n_ = 0;
};

}  // namespace

Status Assemble(const TablePlan& plan, Source* source, CellSink* sink,
                const AssembleOptions& options, TableStats* stats) {
  stats->table = plan.descriptor.FullName();
  auto start = std::chrono::steady_clock::now();
  Status s = TableAssembler(plan, source, sink, options, stats).Run();
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace widen
