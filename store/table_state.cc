#include "store/table_state.h"

#include <cstring>
#include <utility>

#include "common/bytes.h"

namespace widen {

namespace {

// Persisted type codes of a tuple value (table_state.h): never renumber.
// They are spelled out here rather than taken from ValueType's order, so
// that ValueType may change without changing the record.
uint8_t TypeCode(ValueType t) {
  switch (t) {
    case ValueType::kBool:
      return 1;
    case ValueType::kInt:
      return 2;
    case ValueType::kUInt:
      return 3;
    case ValueType::kFloat:
      return 4;
    case ValueType::kDecimal:
      return 5;
    case ValueType::kText:
      return 6;
    case ValueType::kBytes:
      return 7;
    case ValueType::kDate:
      return 8;
    case ValueType::kTime:
      return 9;
    case ValueType::kTimestamp:
      return 10;
    case ValueType::kTimestampTz:
      return 11;
    case ValueType::kJson:
      return 12;
    case ValueType::kOther:
      return 13;
  }
  return 0;
}

bool TypeOfCode(uint8_t code, ValueType* t) {
  static constexpr ValueType kTypes[] = {
      ValueType::kBool,    ValueType::kInt,       ValueType::kUInt,        ValueType::kFloat,
      ValueType::kDecimal, ValueType::kText,      ValueType::kBytes,       ValueType::kDate,
      ValueType::kTime,    ValueType::kTimestamp, ValueType::kTimestampTz, ValueType::kJson,
      ValueType::kOther};
  if (code < 1 || code > sizeof kTypes / sizeof kTypes[0]) return false;
  *t = kTypes[code - 1];
  return true;
}

// How a value's payload is written.
enum class Payload { kInt64, kUInt64, kDouble, kBytes };

Payload PayloadOf(ValueType t) {
  switch (t) {
    case ValueType::kUInt:
      return Payload::kUInt64;
    case ValueType::kFloat:
      return Payload::kDouble;
    case ValueType::kDecimal:
    case ValueType::kText:
    case ValueType::kBytes:
    case ValueType::kJson:
    case ValueType::kOther:
      return Payload::kBytes;
    default:
      return Payload::kInt64;  // bool, int, date, time, timestamp, timestamptz
  }
}

constexpr uint8_t kRangeHasLo = 0x01;
constexpr uint8_t kRangeHasHi = 0x02;
constexpr uint8_t kRangeWithNull = 0x04;

void PutStr(std::string* dst, std::string_view s) {
  PutFixed32BE(dst, static_cast<uint32_t>(s.size()));
  dst->append(s.data(), s.size());
}

void PutValue(std::string* dst, const Value& v) {
  dst->push_back(static_cast<char>(TypeCode(v.type())));
  dst->push_back(v.is_null() ? '\x00' : '\x01');
  if (v.is_null()) return;
  switch (PayloadOf(v.type())) {
    case Payload::kInt64:
      PutFixed64BE(dst, static_cast<uint64_t>(v.as_int()));
      break;
    case Payload::kUInt64:
      PutFixed64BE(dst, v.as_uint());
      break;
    case Payload::kDouble: {
      const double d = v.as_double();
      uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      PutFixed64BE(dst, bits);
      break;
    }
    case Payload::kBytes:
      PutStr(dst, v.as_bytes());
      break;
  }
}

void PutTuple(std::string* dst, const std::vector<Value>& values) {
  PutFixed32BE(dst, static_cast<uint32_t>(values.size()));
  for (const Value& v : values) PutValue(dst, v);
}

void PutColumns(std::string* dst, const std::vector<std::string>& columns) {
  PutFixed32BE(dst, static_cast<uint32_t>(columns.size()));
  for (const std::string& c : columns) PutStr(dst, c);
}

// Reads a record front to back; the first error sticks.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool U8(uint8_t* v) {
    if (!Need(1)) return false;
    *v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t* v) {
    if (!Need(4)) return false;
    *v = DecodeFixed32BE(in_.data());
    in_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t* v) {
    if (!Need(8)) return false;
    *v = DecodeFixed64BE(in_.data());
    in_.remove_prefix(8);
    return true;
  }
  bool I64(int64_t* v) {
    uint64_t u = 0;
    if (!U64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Str(std::string* s) {
    uint32_t n = 0;
    if (!U32(&n) || !Need(n)) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  // A count of items that each take at least `min_bytes`: refuses counts
  // the remaining bytes cannot hold (no huge allocation from a bad record).
  bool Count(uint32_t* n, size_t min_bytes) {
    if (!U32(n)) return false;
    if (static_cast<uint64_t>(*n) * min_bytes > in_.size())
      return Fail("a count beyond the record");
    return true;
  }
  bool Columns(std::vector<std::string>* columns) {
    uint32_t n = 0;
    if (!Count(&n, 4)) return false;
    columns->resize(n);
    for (std::string& c : *columns) {
      if (!Str(&c)) return false;
    }
    return true;
  }
  bool ValueOf(Value* v) {
    uint8_t code = 0, present = 0;
    if (!U8(&code) || !U8(&present)) return false;
    ValueType t;
    if (!TypeOfCode(code, &t)) return Fail("unknown value type code " + std::to_string(code));
    if (present > 1) return Fail("a NULL flag of " + std::to_string(present));
    if (present == 0) {
      *v = Value::Null(t);
      return true;
    }
    switch (PayloadOf(t)) {
      case Payload::kInt64: {
        int64_t x = 0;
        if (!I64(&x)) return false;
        if (t == ValueType::kBool && x != 0 && x != 1)
          return Fail("a bool of " + std::to_string(x));
        *v = t == ValueType::kBool  ? Value::Bool(x != 0)
             : t == ValueType::kInt ? Value::Int(x)
                                    : Value::Temporal(t, x);
        return true;
      }
      case Payload::kUInt64: {
        uint64_t x = 0;
        if (!U64(&x)) return false;
        *v = Value::UInt(x);
        return true;
      }
      case Payload::kDouble: {
        uint64_t bits = 0;
        if (!U64(&bits)) return false;
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        *v = Value::Float(d);
        return true;
      }
      case Payload::kBytes: {
        std::string s;
        if (!Str(&s)) return false;
        *v = Value::Str(t, s);
        return true;
      }
    }
    return Fail("unknown payload");
  }
  bool Tuple(std::vector<Value>* values) {
    uint32_t n = 0;
    if (!Count(&n, 2)) return false;
    values->resize(n);
    for (Value& v : *values) {
      if (!ValueOf(&v)) return false;
    }
    return true;
  }

  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  bool done() const { return in_.empty(); }
  std::string_view rest() const { return in_; }
  const std::string& error() const { return error_; }

 private:
  bool Need(size_t n) {
    if (in_.size() >= n) return true;
    return Fail("cut short");
  }

  std::string_view in_;
  std::string error_;
};

Status CheckTuple(const std::string& what, const std::string& table, size_t columns,
                  size_t values) {
  if (columns == values) return Status::OK();
  return Status::InvalidArgument("table state: " + what + " of source table '" + table + "' has " +
                                 std::to_string(values) + " values for " + std::to_string(columns) +
                                 " columns");
}

}  // namespace

std::string_view TableStatusName(TableStatus status) {
  switch (status) {
    case TableStatus::kLoading:
      return "loading";
    case TableStatus::kComplete:
      return "complete";
    case TableStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

Result<std::string> EncodeTableState(const TableState& s) {
  std::string out;
  out.push_back(static_cast<char>(kStateRecordVersion));
  out.push_back(static_cast<char>(s.status));
  PutStr(&out, s.run_id);
  PutFixed64BE(&out, static_cast<uint64_t>(s.started_ms));
  PutFixed64BE(&out, static_cast<uint64_t>(s.finished_ms));
  PutStr(&out, s.mapping_fingerprint);
  PutFixed32BE(&out, static_cast<uint32_t>(s.watermarks.size()));
  for (const Watermark& w : s.watermarks) {
    WIDEN_RETURN_IF_ERROR(
        CheckTuple("a watermark", w.source_table, w.columns.size(), w.values.size()));
    PutStr(&out, w.source_table);
    PutColumns(&out, w.columns);
    PutTuple(&out, w.values);
  }
  PutFixed32BE(&out, static_cast<uint32_t>(s.finished_ranges.size()));
  for (const FinishedRange& r : s.finished_ranges) {
    if (r.has_lo) {
      WIDEN_RETURN_IF_ERROR(
          CheckTuple("a range's low bound", r.source_table, r.columns.size(), r.lo.size()));
    }
    if (r.has_hi) {
      WIDEN_RETURN_IF_ERROR(
          CheckTuple("a range's high bound", r.source_table, r.columns.size(), r.hi.size()));
    }
    PutStr(&out, r.source_table);
    PutColumns(&out, r.columns);
    uint8_t flags = 0;
    if (r.has_lo) flags |= kRangeHasLo;
    if (r.has_hi) flags |= kRangeHasHi;
    if (r.with_null) flags |= kRangeWithNull;
    out.push_back(static_cast<char>(flags));
    PutTuple(&out, r.has_lo ? r.lo : std::vector<Value>());
    PutTuple(&out, r.has_hi ? r.hi : std::vector<Value>());
  }
  PutFixed32BE(&out, static_cast<uint32_t>(s.extensions.size()));
  for (const auto& [name, bytes] : s.extensions) {
    PutStr(&out, name);
    PutStr(&out, bytes);
  }
  return out;
}

Result<TableState> DecodeTableState(std::string_view record) {
  Reader r(record);
  TableState s;
  uint8_t version = 0;
  if (!r.U8(&version)) return Status::DataLoss("table state record: empty");
  if (version != kStateRecordVersion) {
    return Status::FailedPrecondition(
        "table state record of version " + std::to_string(version) + "; this widen reads version " +
        std::to_string(kStateRecordVersion) + " (it was written by a newer widen)");
  }
  uint8_t status = 0;
  uint32_t n = 0;
  bool ok = r.U8(&status);
  if (ok && (status < 1 || status > 3))
    ok = r.Fail("unknown status code " + std::to_string(status));
  if (ok) s.status = static_cast<TableStatus>(status);
  ok = ok && r.Str(&s.run_id) && r.I64(&s.started_ms) && r.I64(&s.finished_ms) &&
       r.Str(&s.mapping_fingerprint) && r.Count(&n, 12);
  if (ok) s.watermarks.resize(n);
  for (size_t i = 0; ok && i < s.watermarks.size(); ++i) {
    Watermark& w = s.watermarks[i];
    ok = r.Str(&w.source_table) && r.Columns(&w.columns) && r.Tuple(&w.values);
    if (ok && w.values.size() != w.columns.size()) ok = r.Fail("a watermark of another width");
  }
  ok = ok && r.Count(&n, 17);
  if (ok) s.finished_ranges.resize(n);
  for (size_t i = 0; ok && i < s.finished_ranges.size(); ++i) {
    FinishedRange& f = s.finished_ranges[i];
    uint8_t flags = 0;
    ok = r.Str(&f.source_table) && r.Columns(&f.columns) && r.U8(&flags) && r.Tuple(&f.lo) &&
         r.Tuple(&f.hi);
    if (!ok) break;
    if ((flags & ~(kRangeHasLo | kRangeHasHi | kRangeWithNull)) != 0) {
      ok = r.Fail("unknown range flags");
      break;
    }
    f.has_lo = (flags & kRangeHasLo) != 0;
    f.has_hi = (flags & kRangeHasHi) != 0;
    f.with_null = (flags & kRangeWithNull) != 0;
    if (f.lo.size() != (f.has_lo ? f.columns.size() : 0) ||
        f.hi.size() != (f.has_hi ? f.columns.size() : 0)) {
      ok = r.Fail("a range bound of another width");
    }
  }
  ok = ok && r.Count(&n, 8);
  for (uint32_t i = 0; ok && i < n; ++i) {
    std::string name, bytes;
    ok = r.Str(&name) && r.Str(&bytes);
    if (ok) s.extensions[std::move(name)] = std::move(bytes);
  }
  if (ok && !r.done()) ok = r.Fail("bytes after its end");
  if (!ok) return Status::DataLoss("table state record is malformed: " + r.error());
  return s;
}

void AppendValueTuple(std::string* dst, const std::vector<Value>& values) { PutTuple(dst, values); }

Status ReadValueTuple(std::string_view* in, std::vector<Value>* values) {
  Reader r(*in);
  if (!r.Tuple(values)) return Status::DataLoss("a malformed value tuple: " + r.error());
  *in = r.rest();
  return Status::OK();
}

std::string HexBytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0x0f]);
  }
  return out;
}

}  // namespace widen
