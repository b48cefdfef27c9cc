#include "transform/key_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/temporal.h"
#include "transform/exact_number_internal.h"
#include "transform/ordered_bytes.h"

namespace widen {

namespace {

constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();

int IntWidth(KeyType t) {
  switch (t) {
    case KeyType::kInt8:
      return 1;
    case KeyType::kInt16:
      return 2;
    case KeyType::kInt32:
      return 4;
    case KeyType::kInt64:
      return 8;
    default:
      return 0;
  }
}

Status OutOfRange(const KeyPartPlan& p, const Value& v, std::string_view why) {
  return Status::InvalidArgument(
      fmt::format("key part '{}' value '{}' {}", p.name, v.DebugString(), why));
}

// Why `v` cannot be a part of key type `what` ("date", "timestamp", "time"),
// for a value that is not one: saying what it is instead.
std::string NotA(const Value& v, std::string_view what) {
  const bool temporal = v.type() == ValueType::kDate || v.type() == ValueType::kTimestamp ||
                        v.type() == ValueType::kTimestampTz;
  if (temporal && IsInfinite(v.as_int())) {
    return fmt::format("is infinite; a {} key part holds finite values only", what);
  }
  if (v.type() == ValueType::kOther) {
    return fmt::format(
        "is kept as the server's text, not as a {}: a zero or partial MySQL date, or a "
        "PostgreSQL date/time beyond what widen reads as numbers (after 294247-01-10)",
        what);
  }
  if (v.type() == ValueType::kDate && what == "date") {
    return "is out of the range of a date key part (4 bytes of days)";
  }
  return fmt::format("is a {}, not a {}", ValueTypeName(v.type()), what);
}

}  // namespace

bool KeyTypeAccepts(KeyType t, ValueType type) {
  const bool integer =
      type == ValueType::kBool || type == ValueType::kInt || type == ValueType::kUInt;
  switch (t) {
    case KeyType::kString:
    case KeyType::kBytes:
      return true;
    case KeyType::kInt8:
    case KeyType::kInt16:
    case KeyType::kInt32:
    case KeyType::kInt64:
    case KeyType::kUInt64:
    case KeyType::kFloat32:
    case KeyType::kFloat64:
      return integer || type == ValueType::kDecimal || type == ValueType::kFloat;
    case KeyType::kDecimal:
      return type == ValueType::kInt || type == ValueType::kUInt || type == ValueType::kDecimal;
    case KeyType::kBool:
      return integer;
    case KeyType::kDate:
      return type == ValueType::kDate;
    case KeyType::kTimestamp:
      return type == ValueType::kTimestamp || type == ValueType::kTimestampTz ||
             type == ValueType::kDate || type == ValueType::kInt;
    case KeyType::kTime:
      return type == ValueType::kTime;
  }
  return false;
}

int KeyTypeBytes(KeyType t) {
  switch (t) {
    case KeyType::kInt8:
    case KeyType::kBool:
      return 1;
    case KeyType::kInt16:
      return 2;
    case KeyType::kInt32:
    case KeyType::kFloat32:
    case KeyType::kDate:
      return 4;
    case KeyType::kInt64:
    case KeyType::kUInt64:
    case KeyType::kFloat64:
    case KeyType::kTimestamp:
    case KeyType::kTime:
      return 8;
    case KeyType::kString:
    case KeyType::kBytes:
    case KeyType::kDecimal:
      return 0;
  }
  return 0;
}

uint32_t Fnv1a32(std::string_view bytes) {
  uint32_t h = 2166136261u;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t HashPrefix64(std::string_view bytes) {
  // FNV-1a's high bytes barely change between short inputs that differ at the
  // end; MurmurHash3's 64-bit finalizer (fmix64) spreads every input bit.
  uint64_t h = Fnv1a64(bytes);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

KeyCodec::KeyCodec(KeyForm form, std::vector<KeyPartPlan> parts, std::string separator,
                   KeyHashPlan salt, KeyHashPlan hash_prefix)
    : form_(form),
      parts_(std::move(parts)),
      separator_(std::move(separator)),
      salt_(std::move(salt)),
      hash_(std::move(hash_prefix)) {
  for (KeyHashPlan* h : {&salt_, &hash_}) {
    if (h->size > 0 && h->parts.empty()) {
      for (size_t i = 0; i < parts_.size(); ++i) {
        if (!parts_[i].is_literal) h->parts.push_back(i);
      }
    }
  }
}

Status KeyCodec::EncodePartBinary(const KeyPartPlan& p, const Value& v, std::string* out) const {
  const size_t start = out->size();
  if (p.null_marker) {
    if (v.is_null()) {
      out->push_back('\0');
      if (p.desc) ordered::Invert(out, start);
      return Status::OK();
    }
    out->push_back('\x01');
  } else if (v.is_null()) {
    return Status::InvalidArgument(
        fmt::format("key part '{}' is NULL (give it on_null: marker to allow NULL keys)", p.name));
  }
  switch (p.type) {
    case KeyType::kString:
    case KeyType::kBytes: {
      std::string_view bytes;
      std::string text;
      if (v.type() == ValueType::kText || v.type() == ValueType::kBytes ||
          v.type() == ValueType::kJson || v.type() == ValueType::kOther ||
          v.type() == ValueType::kDecimal) {
        bytes = v.as_bytes();
      } else {
        v.AppendText(&text);
        bytes = text;
      }
      if (p.width > 0) {
        if (!ordered::PutFixedString(out, bytes, p.width)) {
          return OutOfRange(p, v,
                            fmt::format("does not fit a fixed width of {} bytes without "
                                        "0x00 bytes",
                                        p.width));
        }
      } else {
        ordered::PutString(out, bytes);
      }
      break;
    }
    case KeyType::kInt8:
    case KeyType::kInt16:
    case KeyType::kInt32:
    case KeyType::kInt64:
    case KeyType::kUInt64: {
      exact::Integer x;
      std::string why;
      if (!exact::ToInteger(v, &x, &why)) {
        return OutOfRange(p, v,
                          why == "it is beyond 64 bits"
                              ? fmt::format("does not fit {} ({})", KeyTypeName(p.type), why)
                              : fmt::format("is not an integer ({})", why));
      }
      if (p.type == KeyType::kUInt64) {
        if (x.negative)
          return OutOfRange(p, v, "is negative; uint64 holds 0 to 18446744073709551615");
        ordered::PutUInt64(out, x.magnitude);
        break;
      }
      const int w = IntWidth(p.type);
      const int64_t hi = w == 8 ? INT64_MAX : (int64_t{1} << (w * 8 - 1)) - 1;
      const int64_t lo = -hi - 1;
      if (!x.Within(lo, hi)) {
        return OutOfRange(
            p, v, fmt::format("is out of range for {} ({} to {})", KeyTypeName(p.type), lo, hi));
      }
      ordered::PutInt(out, x.AsInt64(), w);
      break;
    }
    case KeyType::kFloat32:
    case KeyType::kFloat64: {
      double d;
      std::string why;
      if (v.type() == ValueType::kBool ||
          !exact::ToFloating(v, p.type == KeyType::kFloat32, &d, &why)) {
        return OutOfRange(
            p, v,
            fmt::format("does not fit a {} key part ({})", KeyTypeName(p.type),
                        v.type() == ValueType::kBool ? "a bool is not a number" : why));
      }
      if (p.type == KeyType::kFloat64) {
        ordered::PutDouble(out, d);
      } else {
        ordered::PutFloat(out, static_cast<float>(d));
      }
      break;
    }
    case KeyType::kDecimal: {
      std::string text;
      if (v.type() == ValueType::kDecimal) {
        text.assign(v.as_bytes());
      } else if (v.type() == ValueType::kInt || v.type() == ValueType::kUInt) {
        v.AppendText(&text);
      } else {
        return OutOfRange(p, v, "is not an exact decimal");
      }
      if (!ordered::PutDecimal(out, text)) {
        return OutOfRange(p, v,
                          fmt::format("is not a finite number of at most {} digits before or "
                                      "after the point; a decimal key part holds such values "
                                      "only (NaN, Infinity and -Infinity have no place in its "
                                      "order)",
                                      ordered::kMaxDecimalExponent));
      }
      break;
    }
    case KeyType::kBool: {
      exact::Integer x;
      std::string why;
      const bool number = v.type() == ValueType::kBool || v.type() == ValueType::kInt ||
                          v.type() == ValueType::kUInt;
      if (!number || !exact::ToInteger(v, &x, &why) || !x.Within(0, 1)) {
        return OutOfRange(p, v, "is not a boolean (true, false, 0 or 1)");
      }
      ordered::PutBool(out, x.magnitude != 0);
      break;
    }
    case KeyType::kDate: {
      if (v.type() != ValueType::kDate || v.as_int() < INT32_MIN || v.as_int() > INT32_MAX) {
        return OutOfRange(p, v, NotA(v, "date"));
      }
      ordered::PutInt(out, v.as_int(), 4);
      break;
    }
    case KeyType::kTimestamp: {
      int64_t ms;
      if (!EpochMs(v, &ms)) return OutOfRange(p, v, NotA(v, "timestamp"));
      if (p.reverse) {
        if (ms < 0) return OutOfRange(p, v, "is before 1970 and cannot be reversed");
        PutFixed64BE(out, static_cast<uint64_t>(kLongMax - ms));
      } else {
        ordered::PutInt(out, ms, 8);
      }
      break;
    }
    case KeyType::kTime:
      if (v.type() != ValueType::kTime) return OutOfRange(p, v, NotA(v, "time"));
      ordered::PutInt(out, v.as_int(), 8);
      break;
  }
  if (p.desc) ordered::Invert(out, start);
  return Status::OK();
}

Status KeyCodec::EncodePartText(const KeyPartPlan& p, const Value& v, std::string* out) const {
  if (v.is_null()) {
    return Status::InvalidArgument(fmt::format("key part '{}' is NULL", p.name));
  }
  const size_t start = out->size();
  if (p.reverse) {
    int64_t ms;
    if (!EpochMs(v, &ms)) return OutOfRange(p, v, NotA(v, "timestamp"));
    if (ms < 0) return OutOfRange(p, v, "is before 1970 and cannot be reversed");
    out->append(fmt::format("{:019d}", kLongMax - ms));
  } else if (p.width > 0 && IsIntegerType(v.type())) {
    // Zero-padded digits sort like the numbers only when every value is
    // non-negative and has at most `width` digits: anything else would be
    // out of order (-005 > -010, 1000 < 999 as text), so its row is refused.
    if (v.type() == ValueType::kInt && v.as_int() < 0) {
      return OutOfRange(p, v,
                        fmt::format("is negative: in a text key with width {} negative numbers "
                                    "sort out of order (-005 after -010); use form: binary",
                                    p.width));
    }
    const std::string digits =
        v.type() == ValueType::kUInt ? std::to_string(v.as_uint()) : std::to_string(v.as_int());
    if (digits.size() > static_cast<size_t>(p.width)) {
      return OutOfRange(p, v,
                        fmt::format("has {} digits, more than the part's width {}: it would sort "
                                    "out of order ({} before {}); raise the width",
                                    digits.size(), p.width, "1" + std::string(p.width, '0'),
                                    std::string(p.width, '9')));
    }
    out->append(static_cast<size_t>(p.width) - digits.size(), '0');
    out->append(digits);
  } else {
    v.AppendText(out);
  }
  if (!separator_.empty() &&
      std::string_view(*out).substr(start).find(separator_) != std::string_view::npos) {
    return Status::InvalidArgument(fmt::format(
        "key part '{}' value '{}' contains the key separator '{}' (keys would be ambiguous)",
        p.name, v.DebugString(), separator_));
  }
  return Status::OK();
}

Status KeyCodec::Encode(const Row& row, std::string* out) const {
  const bool text = form_ == KeyForm::kText;
  thread_local std::string body;
  thread_local std::vector<std::pair<size_t, size_t>> spans;
  body.clear();
  spans.clear();
  for (size_t i = 0; i < parts_.size(); ++i) {
    const KeyPartPlan& p = parts_[i];
    if (text && i > 0) body.append(separator_);
    const size_t start = body.size();
    if (p.is_literal) {
      body.append(p.literal);
    } else if (text) {
      WIDEN_RETURN_IF_ERROR(EncodePartText(p, row[p.index], &body));
    } else {
      WIDEN_RETURN_IF_ERROR(EncodePartBinary(p, row[p.index], &body));
    }
    spans.emplace_back(start, body.size());
  }
  auto hash_input = [&](const KeyHashPlan& h) {
    std::string in;
    for (size_t i : h.parts) in.append(body, spans[i].first, spans[i].second - spans[i].first);
    return in;
  };
  if (salt_.size > 0) {
    const uint32_t bucket = Fnv1a32(hash_input(salt_)) % static_cast<uint32_t>(salt_.size);
    if (text) {
      const int digits = static_cast<int>(std::to_string(salt_.size - 1).size());
      out->append(fmt::format("{:0{}d}", bucket, digits));
      out->append(separator_);
    } else {
      out->push_back(static_cast<char>(bucket));
    }
  }
  if (hash_.size > 0) {
    const uint64_t h = HashPrefix64(hash_input(hash_));
    std::string bytes;
    PutFixed64BE(&bytes, h);
    bytes.resize(hash_.size);
    if (text) {
      static const char kHex[] = "0123456789abcdef";
      for (unsigned char c : bytes) {
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
      }
      out->append(separator_);
    } else {
      out->append(bytes);
    }
  }
  out->append(body);
  return Status::OK();
}

Status KeyCodec::EncodePrefixes(const Row& row, size_t leading,
                                std::vector<std::string>* prefixes) const {
  const bool text = form_ == KeyForm::kText;
  std::string body;
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < leading && i < parts_.size(); ++i) {
    const KeyPartPlan& p = parts_[i];
    if (text && i > 0) body.append(separator_);
    const size_t start = body.size();
    if (p.is_literal) {
      body.append(p.literal);
    } else if (text) {
      WIDEN_RETURN_IF_ERROR(EncodePartText(p, row[p.index], &body));
    } else {
      WIDEN_RETURN_IF_ERROR(EncodePartBinary(p, row[p.index], &body));
    }
    spans.emplace_back(start, body.size());
  }
  if (text && leading > 0 && leading < parts_.size()) body.append(separator_);
  // The hashed parts, if every one is among the leading parts.
  auto hash_input = [&](const KeyHashPlan& h, std::string* in) {
    std::vector<size_t> hashed = h.parts;
    if (hashed.empty()) {
      for (size_t i = 0; i < parts_.size(); ++i) {
        if (!parts_[i].is_literal) hashed.push_back(i);
      }
    }
    for (size_t i : hashed) {
      if (i >= spans.size()) return false;
      in->append(body, spans[i].first, spans[i].second - spans[i].first);
    }
    return true;
  };
  std::string hash_bytes;
  if (hash_.size > 0) {
    std::string in;
    if (!hash_input(hash_, &in)) {
      return Status::FailedPrecondition(
          "the hash prefix hashes key parts beyond those given: the rows are spread over the "
          "whole key range");
    }
    std::string bytes;
    PutFixed64BE(&bytes, HashPrefix64(in));
    bytes.resize(hash_.size);
    if (text) {
      static const char kHex[] = "0123456789abcdef";
      for (unsigned char c : bytes) {
        hash_bytes.push_back(kHex[c >> 4]);
        hash_bytes.push_back(kHex[c & 15]);
      }
      hash_bytes.append(separator_);
    } else {
      hash_bytes = bytes;
    }
  }
  prefixes->clear();
  auto bucket_text = [&](uint32_t bucket) {
    if (!text) return std::string(1, static_cast<char>(bucket));
    const int digits = static_cast<int>(std::to_string(salt_.size - 1).size());
    return fmt::format("{:0{}d}", bucket, digits) + separator_;
  };
  if (salt_.size > 0) {
    std::string in;
    if (hash_input(salt_, &in)) {
      const uint32_t bucket = Fnv1a32(in) % static_cast<uint32_t>(salt_.size);
      prefixes->push_back(bucket_text(bucket) + hash_bytes + body);
    } else {
      for (int b = 0; b < salt_.size; ++b) {
        prefixes->push_back(bucket_text(static_cast<uint32_t>(b)) + hash_bytes + body);
      }
    }
  } else {
    prefixes->push_back(hash_bytes + body);
  }
  return Status::OK();
}

bool KeyCodec::DecodePartBinary(const KeyPartPlan& p, std::string_view* in, Value* value,
                                std::string* why) const {
  if (p.null_marker) {
    if (in->empty()) {
      *why = "the key ends where its NULL marker should be";
      return false;
    }
    unsigned char ind = static_cast<unsigned char>((*in)[0]);
    if (p.desc) ind = static_cast<unsigned char>(~ind);
    in->remove_prefix(1);
    if (ind == 0) {
      value->SetNull(ValueType::kText);
      return true;
    }
    if (ind != 1) {
      *why = fmt::format("its NULL marker is {}, not 00 or 01",
                         ToStringBinary(std::string(1, static_cast<char>(ind))));
      return false;
    }
  }
  // Take the part's bytes, undoing desc.
  size_t n = static_cast<size_t>(KeyTypeBytes(p.type));
  if (p.type == KeyType::kString || p.type == KeyType::kBytes) {
    n = p.width > 0 ? static_cast<size_t>(p.width) : ordered::StringLength(*in, p.desc);
  } else if (p.type == KeyType::kDecimal) {
    n = ordered::DecimalLength(*in, p.desc);
  }
  if (n == 0 || n > in->size()) {
    *why = n == 0
               ? fmt::format("no well-formed {} at '{}'", KeyTypeName(p.type), ToStringBinary(*in))
               : fmt::format("needs {} bytes, {} left", n, in->size());
    return false;
  }
  std::string part(in->substr(0, n));
  in->remove_prefix(n);
  if (p.desc) ordered::Invert(&part, 0);
  std::string_view v(part);
  bool ok = true;
  switch (p.type) {
    case KeyType::kString:
    case KeyType::kBytes: {
      std::string bytes;
      ok = p.width > 0 ? ordered::GetFixedString(&v, p.width, &bytes)
                       : ordered::GetString(&v, &bytes);
      value->SetBytes(p.type == KeyType::kBytes ? ValueType::kBytes : ValueType::kText, bytes);
      break;
    }
    case KeyType::kInt8:
    case KeyType::kInt16:
    case KeyType::kInt32:
    case KeyType::kInt64: {
      int64_t x = 0;
      ok = ordered::GetInt(&v, IntWidth(p.type), &x);
      value->SetInt(ValueType::kInt, x);
      break;
    }
    case KeyType::kUInt64: {
      uint64_t x = 0;
      ok = ordered::GetUInt64(&v, &x);
      value->SetUInt(x);
      break;
    }
    case KeyType::kFloat32: {
      float f = 0;
      ok = ordered::GetFloat(&v, &f);
      value->SetDouble(f);
      break;
    }
    case KeyType::kFloat64: {
      double d = 0;
      ok = ordered::GetDouble(&v, &d);
      value->SetDouble(d);
      break;
    }
    case KeyType::kDecimal:
      ok = ordered::GetDecimal(&v, value->mutable_bytes(ValueType::kDecimal));
      break;
    case KeyType::kBool: {
      bool b = false;
      ok = ordered::GetBool(&v, &b);
      value->SetInt(ValueType::kBool, b ? 1 : 0);
      break;
    }
    case KeyType::kDate: {
      int64_t d = 0;
      ok = ordered::GetInt(&v, 4, &d);
      value->SetInt(ValueType::kDate, d);
      break;
    }
    case KeyType::kTimestamp: {
      int64_t ms = 0;
      if (p.reverse) {
        // Long.MAX_VALUE - ms for ms >= 0: 0 .. Long.MAX_VALUE, top bit clear.
        const uint64_t stored = DecodeFixed64BE(v.data());
        ok = stored <= static_cast<uint64_t>(kLongMax);
        if (ok) ms = kLongMax - static_cast<int64_t>(stored);
        v.remove_prefix(8);
      } else {
        ok = ordered::GetInt(&v, 8, &ms);
      }
      value->SetInt(ValueType::kInt, ms);  // milliseconds, see DecodedPart
      break;
    }
    case KeyType::kTime: {
      int64_t us = 0;
      ok = ordered::GetInt(&v, 8, &us);
      value->SetInt(ValueType::kTime, us);
      break;
    }
  }
  if (!ok || !v.empty()) {
    *why = fmt::format("'{}' is no well-formed {}", ToStringBinary(part), KeyTypeName(p.type));
    return false;
  }
  return true;
}

namespace {

// The display text of a part's value as DecodePartBinary gives it.
std::string DisplayText(const KeyPartPlan& p, const Value& v) {
  if (v.is_null()) return "NULL";
  if (v.type() == ValueType::kText || v.type() == ValueType::kBytes) {
    return ToStringBinary(v.as_bytes());
  }
  if (p.type == KeyType::kTimestamp) return MsText(v.as_int());
  return v.ToText();
}

// Reads `text`, the canonical text form (Value::AppendText) of a value of
// `type`, back into *out; false when it is not one.
bool ParseValueText(ValueType type, std::string_view text, Value* out) {
  switch (type) {
    case ValueType::kBool:
      if (text != "true" && text != "false") return false;
      out->SetInt(ValueType::kBool, text == "true" ? 1 : 0);
      return true;
    case ValueType::kInt:
    case ValueType::kUInt:
    case ValueType::kFloat: {
      if (type == ValueType::kFloat &&
          (text == "NaN" || text == "Infinity" || text == "-Infinity")) {
        out->SetDouble(text == "NaN"
                           ? std::numeric_limits<double>::quiet_NaN()
                           : (text[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity());
        return true;
      }
      const char* end = text.data() + text.size();
      std::from_chars_result r;
      if (type == ValueType::kInt) {
        int64_t x = 0;
        r = std::from_chars(text.data(), end, x);
        out->SetInt(ValueType::kInt, x);
      } else if (type == ValueType::kUInt) {
        uint64_t x = 0;
        r = std::from_chars(text.data(), end, x);
        out->SetUInt(x);
      } else {
        double x = 0;
        r = std::from_chars(text.data(), end, x);
        out->SetDouble(x);
      }
      // Only the text AppendText writes: no '+', no leading zeros.
      return r.ec == std::errc() && r.ptr == end && out->ToText() == text;
    }
    case ValueType::kDate: {
      int64_t days;
      if (!ParseDateText(text, &days)) return false;
      out->SetInt(ValueType::kDate, days);
      return true;
    }
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz: {
      int64_t micros;
      if (!ParseTimestampText(text, type == ValueType::kTimestampTz, &micros)) return false;
      out->SetInt(type, micros);
      return true;
    }
    case ValueType::kTime: {
      int64_t micros;
      if (!ParseTimeText(text, &micros)) return false;
      out->SetInt(ValueType::kTime, micros);
      return true;
    }
    case ValueType::kDecimal:
    case ValueType::kText:
    case ValueType::kBytes:
    case ValueType::kJson:
    case ValueType::kOther:
      out->SetBytes(type, text);
      return true;
  }
  return false;
}

// Milliseconds `ms` of a timestamp part as the part's source type:
// timestamps (microseconds), a date when it is midnight, an integer as the
// milliseconds; kTimestamp when the source type is not known.
bool TimestampAs(ValueType type, int64_t ms, Value* out, std::string* why) {
  switch (type) {
    case ValueType::kInt:
      out->SetInt(ValueType::kInt, ms);
      return true;
    case ValueType::kDate:
      if (ms % kMsPerDay == 0) {
        out->SetInt(ValueType::kDate, ms / kMsPerDay);
        return true;
      }
      break;
    case ValueType::kTimestampTz:
      break;
    default:
      type = ValueType::kTimestamp;
  }
  if (type == ValueType::kDate) type = ValueType::kTimestamp;
  int64_t micros;
  if (!MsToMicros(ms, &micros)) {
    *why = fmt::format("{} ms is beyond the microseconds of a timestamp", ms);
    return false;
  }
  out->SetInt(type, micros);
  return true;
}

// A number decoded from a binary part (kInt, kUInt, kFloat, kDecimal, kBool)
// as the part's source type `type` when that holds it exactly; else kept.
void NumberAs(ValueType type, Value* v) {
  exact::Integer x;
  std::string why;
  switch (type) {
    case ValueType::kInt:
      if (v->type() != ValueType::kInt && exact::ToInteger(*v, &x, &why) &&
          x.Within(INT64_MIN, INT64_MAX)) {
        v->SetInt(ValueType::kInt, x.AsInt64());
      }
      return;
    case ValueType::kUInt:
      if (v->type() != ValueType::kUInt && exact::ToInteger(*v, &x, &why) && !x.negative) {
        v->SetUInt(x.magnitude);
      }
      return;
    case ValueType::kBool:
      if (v->type() != ValueType::kBool && exact::ToInteger(*v, &x, &why) && x.Within(0, 1)) {
        v->SetInt(ValueType::kBool, static_cast<int64_t>(x.magnitude));
      }
      return;
    case ValueType::kFloat: {
      double d;
      if (v->type() != ValueType::kFloat && exact::ToFloating(*v, false, &d, &why)) {
        v->SetDouble(d);
      }
      return;
    }
    case ValueType::kDecimal:
      if (v->type() == ValueType::kFloat) {
        if (std::isfinite(v->as_double())) {
          v->SetBytes(ValueType::kDecimal, exact::Shortest(v->as_double()));
        }
      } else if (v->type() == ValueType::kInt || v->type() == ValueType::kUInt) {
        v->SetBytes(ValueType::kDecimal, v->ToText());
      }
      return;
    default:
      return;
  }
}

// Whether two decoded values are one value: the same type, NULL or not,
// and the same bytes or number (decoded values are canonical, so equal
// values have equal representations).
bool SameDecodedValue(const Value& a, const Value& b) {
  if (a.type() != b.type() || a.is_null() != b.is_null()) return false;
  if (a.is_null()) return true;
  switch (a.type()) {
    case ValueType::kUInt:
      return a.as_uint() == b.as_uint();
    case ValueType::kFloat: {
      const double x = a.as_double(), y = b.as_double();
      return std::isnan(x) ? std::isnan(y) : (x == y && std::signbit(x) == std::signbit(y));
    }
    case ValueType::kDecimal:
    case ValueType::kText:
    case ValueType::kBytes:
    case ValueType::kJson:
    case ValueType::kOther:
      return a.as_bytes() == b.as_bytes();
    default:
      return a.as_int() == b.as_int();
  }
}

}  // namespace

bool KeyCodec::Decode(std::string_view key,
                      std::vector<std::pair<std::string, std::string>>* parts) const {
  parts->clear();
  const bool text = form_ == KeyForm::kText;
  auto take_text = [&](std::string* piece, bool last) {
    if (last) {
      // The rest of the key; a separator in it was never written.
      if (!separator_.empty() && key.find(separator_) != std::string_view::npos) return false;
      piece->assign(key);
      key = std::string_view();
      return true;
    }
    if (separator_.empty()) return false;
    size_t pos = key.find(separator_);
    if (pos == std::string_view::npos) return false;
    piece->assign(key.substr(0, pos));
    key.remove_prefix(pos + separator_.size());
    return true;
  };
  if (salt_.size > 0) {
    std::string piece;
    if (text) {
      if (!take_text(&piece, false)) return false;
    } else {
      if (key.empty()) return false;
      piece = std::to_string(static_cast<unsigned char>(key[0]));
      key.remove_prefix(1);
    }
    parts->emplace_back("salt", piece);
  }
  if (hash_.size > 0) {
    std::string piece;
    if (text) {
      if (!take_text(&piece, false)) return false;
    } else {
      if (key.size() < static_cast<size_t>(hash_.size)) return false;
      piece = ToStringBinary(key.substr(0, hash_.size));
      key.remove_prefix(hash_.size);
    }
    parts->emplace_back("hash", piece);
  }
  Value value;
  std::string why;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const KeyPartPlan& p = parts_[i];
    std::string piece;
    if (text) {
      if (!take_text(&piece, i + 1 == parts_.size())) return false;
      if (p.reverse && !p.is_literal) {
        // Long.MAX_VALUE - ms in 19 digits: shown as the time, as binary parts are.
        int64_t ms;
        if (!ReverseMs(piece, &ms)) return false;
        piece = MsText(ms);
      } else {
        piece = ToStringBinary(piece);
      }
    } else if (p.is_literal) {
      if (key.substr(0, p.literal.size()) != p.literal) return false;
      piece = ToStringBinary(p.literal);
      key.remove_prefix(p.literal.size());
    } else if (DecodePartBinary(p, &key, &value, &why)) {
      piece = DisplayText(p, value);
    } else {
      return false;
    }
    parts->emplace_back(p.name, piece);
  }
  return key.empty();
}

bool KeyCodec::ReverseMs(std::string_view digits, int64_t* ms) {
  uint64_t n = 0;
  bool ok = digits.size() == 19;
  for (char c : digits) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + static_cast<uint64_t>(c - '0');  // 19 digits fit in 64 bits
  }
  if (!ok || n > static_cast<uint64_t>(kLongMax)) return false;
  *ms = kLongMax - static_cast<int64_t>(n);
  return true;
}

Result<Row> KeyCodec::DecodeRow(std::string_view key) const {
  const std::string_view whole = key;
  auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(
        fmt::format("row key '{}' does not decode: {}", ToStringBinary(whole), what));
  };
  const bool text = form_ == KeyForm::kText;
  // Text form: the next piece up to the separator (the last part: the rest).
  auto take_text = [&](bool last, std::string_view* piece) {
    if (last) {
      *piece = key;
      key = std::string_view();
      return true;
    }
    const size_t pos = separator_.empty() ? std::string_view::npos : key.find(separator_);
    if (pos == std::string_view::npos) return false;
    *piece = key.substr(0, pos);
    key.remove_prefix(pos + separator_.size());
    return true;
  };
  std::string_view salt_piece, hash_piece;
  if (salt_.size > 0) {
    if (text ? !take_text(false, &salt_piece) : key.empty()) {
      return bad("it ends before its salt");
    }
    if (!text) {
      salt_piece = key.substr(0, 1);
      key.remove_prefix(1);
    }
  }
  if (hash_.size > 0) {
    const size_t n = static_cast<size_t>(hash_.size);
    if (text ? !take_text(false, &hash_piece) : key.size() < n) {
      return bad("it ends before its hash prefix");
    }
    if (!text) {
      hash_piece = key.substr(0, n);
      key.remove_prefix(n);
    }
  }
  size_t columns = 0;
  for (const KeyPartPlan& p : parts_) {
    if (!p.is_literal) columns = std::max(columns, p.index + 1);
  }
  Row row;
  row.values.resize(columns);
  std::vector<bool> decoded(columns, false);             // columns a part gave a value
  std::vector<std::string_view> encoded(parts_.size());  // each part's bytes, for the hashes
  std::string why;
  Value v;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const KeyPartPlan& p = parts_[i];
    const std::string_view before = key;
    auto part_error = [&](std::string_view what) {
      return bad(
          fmt::format("part '{}' ({}, byte {}): {}", p.name,
                      p.is_literal ? std::string("literal") : std::string(KeyTypeName(p.type)),
                      whole.size() - before.size(), what));
    };
    if (text) {
      std::string_view piece;
      if (!take_text(i + 1 == parts_.size(), &piece)) {
        return part_error(fmt::format("no separator '{}' after it", separator_));
      }
      encoded[i] = piece;
      // The last part runs to the end of the key: a separator inside it
      // would be one that Encode refuses to write.
      if (!separator_.empty() && piece.find(separator_) != std::string_view::npos) {
        return part_error(fmt::format("'{}' holds the separator '{}'", ToStringBinary(piece),
                                      ToStringBinary(separator_)));
      }
      if (p.is_literal) {
        if (piece != p.literal) {
          return part_error(fmt::format("'{}' is not the literal '{}'", ToStringBinary(piece),
                                        ToStringBinary(p.literal)));
        }
        continue;
      }
      if (p.reverse) {
        int64_t ms;
        if (!ReverseMs(piece, &ms)) {
          return part_error(
              fmt::format("'{}' is not 19 digits of Long.MAX_VALUE - ms", ToStringBinary(piece)));
        }
        if (!TimestampAs(p.value_type, ms, &v, &why)) return part_error(why);
      } else if (p.width > 0 && IsIntegerType(p.value_type)) {
        const bool digits = piece.size() == static_cast<size_t>(p.width) &&
                            piece.find_first_not_of("0123456789") == std::string_view::npos;
        size_t zeros = 0;  // the padding, but the last digit
        while (zeros + 1 < piece.size() && piece[zeros] == '0') ++zeros;
        if (!digits || !ParseValueText(p.value_type, piece.substr(zeros), &v)) {
          return part_error(fmt::format("'{}' is not {} zero-padded digits of type {}",
                                        ToStringBinary(piece), p.width,
                                        ValueTypeName(p.value_type)));
        }
      } else if (!ParseValueText(p.value_type, piece, &v)) {
        return part_error(fmt::format("'{}' does not read as type {}", ToStringBinary(piece),
                                      ValueTypeName(p.value_type)));
      }
    } else if (p.is_literal) {
      if (key.substr(0, p.literal.size()) != p.literal) {
        return part_error(fmt::format("'{}' does not start with the literal '{}'",
                                      ToStringBinary(key), ToStringBinary(p.literal)));
      }
      key.remove_prefix(p.literal.size());
      encoded[i] = before.substr(0, p.literal.size());
      continue;
    } else {
      if (!DecodePartBinary(p, &key, &v, &why)) return part_error(why);
      encoded[i] = before.substr(0, before.size() - key.size());
      if (v.is_null()) {
        v.SetNull(p.value_type);
      } else if (p.type == KeyType::kTimestamp) {
        if (p.reverse && v.as_int() < 0) {
          return part_error(
              fmt::format("it holds {} ms: a reversed timestamp is >= 0", v.as_int()));
        }
        if (!TimestampAs(p.value_type, v.as_int(), &v, &why)) return part_error(why);
      } else if (v.type() == ValueType::kText || v.type() == ValueType::kBytes) {
        // A string part holds a value's bytes (string-like types) or its text.
        const ValueType t = p.value_type;
        const std::string bytes(v.as_bytes());
        if (t == ValueType::kText || t == ValueType::kBytes || t == ValueType::kJson ||
            t == ValueType::kOther || t == ValueType::kDecimal) {
          v.SetBytes(t, bytes);
        } else if (!ParseValueText(t, bytes, &v)) {
          return part_error(fmt::format("'{}' does not read as type {}", ToStringBinary(bytes),
                                        ValueTypeName(t)));
        }
      } else {
        NumberAs(p.value_type, &v);
      }
    }
    // A column that two parts read (a key [id, {column: id, desc: true}])
    // must hold one value: keys whose parts disagree were not encoded.
    if (decoded[p.index] && !SameDecodedValue(row.values[p.index], v)) {
      return part_error(fmt::format("it holds {}, but an earlier part of the same column holds {}",
                                    v.DebugString(), row.values[p.index].DebugString()));
    }
    decoded[p.index] = true;
    row.values[p.index] = v;
  }
  if (!key.empty()) {
    return bad(
        fmt::format("{} byte(s) left after its last part: '{}'", key.size(), ToStringBinary(key)));
  }
  // The salt and hash prefix must be those of the parts.
  auto hash_input = [&](const KeyHashPlan& h) {
    std::string in;
    for (size_t i : h.parts) in.append(encoded[i]);
    return in;
  };
  if (salt_.size > 0) {
    const uint32_t bucket = Fnv1a32(hash_input(salt_)) % static_cast<uint32_t>(salt_.size);
    const std::string want =
        text ? fmt::format("{:0{}d}", bucket, std::to_string(salt_.size - 1).size())
             : std::string(1, static_cast<char>(bucket));
    if (salt_piece != want) {
      return bad(fmt::format("its salt '{}' is not the parts' bucket '{}'",
                             ToStringBinary(salt_piece), ToStringBinary(want)));
    }
  }
  if (hash_.size > 0) {
    std::string bytes;
    PutFixed64BE(&bytes, HashPrefix64(hash_input(hash_)));
    bytes.resize(hash_.size);
    std::string want;
    if (text) {
      static const char kHex[] = "0123456789abcdef";
      for (unsigned char c : bytes) {
        want.push_back(kHex[c >> 4]);
        want.push_back(kHex[c & 15]);
      }
    } else {
      want = bytes;
    }
    if (hash_piece != want) {
      return bad(fmt::format("its hash prefix '{}' is not the parts' hash '{}'",
                             ToStringBinary(hash_piece), ToStringBinary(want)));
    }
  }
  return row;
}

std::string KeyCodec::Anatomy() const {
  std::string s;
  const bool text = form_ == KeyForm::kText;
  if (salt_.size > 0) {
    s += text ? fmt::format("[salt {} digits]", std::to_string(salt_.size - 1).size())
              : fmt::format("[salt 1B mod {}]", salt_.size);
    if (text) s += "[" + separator_ + "]";
  }
  if (hash_.size > 0) {
    s +=
        text ? fmt::format("[hash {} hex]", 2 * hash_.size) : fmt::format("[hash {}B]", hash_.size);
    if (text) s += "[" + separator_ + "]";
  }
  for (size_t i = 0; i < parts_.size(); ++i) {
    const KeyPartPlan& p = parts_[i];
    if (text && i > 0) s += "[" + separator_ + "]";
    if (p.is_literal) {
      s += "[literal '" + ToStringBinary(p.literal) + "']";
      continue;
    }
    s += "[" + p.name + " " + std::string(KeyTypeName(p.type));
    if (p.reverse) s += " reverse";
    if (p.desc) s += " desc";
    if (p.null_marker) s += " null-marker";
    if (text) {
      if (p.width > 0) s += fmt::format(" {} digits", p.width);
    } else {
      int bytes = KeyTypeBytes(p.type);
      if ((p.type == KeyType::kString || p.type == KeyType::kBytes) && p.width > 0) bytes = p.width;
      if (bytes > 0) {
        s += fmt::format(" {}B", bytes + (p.null_marker ? 1 : 0));
      } else {
        s += p.type == KeyType::kDecimal ? " var" : " var+00 01";
      }
    }
    s += "]";
  }
  return s;
}

std::string KeyCodec::ToJson() const {
  nlohmann::ordered_json j;
  j["form"] = KeyFormNames().Name(form_);
  j["separator"] = separator_;
  auto hash = [](const KeyHashPlan& h) {
    return nlohmann::ordered_json{{"size", h.size}, {"parts", h.parts}};
  };
  j["salt"] = hash(salt_);
  j["hash_prefix"] = hash(hash_);
  j["parts"] = nlohmann::ordered_json::array();
  for (const auto& p : parts_) {
    nlohmann::ordered_json pj;
    pj["name"] = p.name;
    if (p.is_literal) {
      pj["literal"] = ToStringBinary(p.literal);
    } else {
      pj["type"] = KeyTypeName(p.type);
      pj["index"] = p.index;
    }
    pj["width"] = p.width;
    pj["desc"] = p.desc;
    pj["reverse"] = p.reverse;
    pj["null_marker"] = p.null_marker;
    j["parts"].push_back(pj);
  }
  return j.dump();
}

namespace {

// The integer `name` of `j` within [lo, hi]; false when it is missing, not an
// integer (a float, a string) or out of range. Never a conversion that could
// overflow.
bool IntField(const nlohmann::json& j, const char* name, int64_t lo, int64_t hi, int64_t* out) {
  auto it = j.find(name);
  if (it == j.end()) return false;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return false;
    *out = static_cast<int64_t>(u);
  } else if (it->is_number_integer()) {
    *out = it->get<int64_t>();
  } else {
    return false;
  }
  return *out >= lo && *out <= hi;
}

// Reads a salt or hash prefix: its size (0 = none, else [lo, hi]) and the
// indexes of the column parts it hashes.
Status HashField(const nlohmann::json& j, const char* name, int64_t lo, int64_t hi,
                 const std::vector<KeyPartPlan>& parts, KeyHashPlan* out) {
  const nlohmann::json& h = j.at(name);
  int64_t size = 0;
  if (!IntField(h, "size", 0, hi, &size) || (size != 0 && size < lo)) {
    return Status::DataLoss(fmt::format("key layout: {} size is not 0 or {} to {}", name, lo, hi));
  }
  out->size = static_cast<int>(size);
  for (const auto& x : h.at("parts")) {
    nlohmann::json wrapped{{"i", x}};
    int64_t i = 0;
    if (!IntField(wrapped, "i", 0, static_cast<int64_t>(parts.size()) - 1, &i) ||
        parts[static_cast<size_t>(i)].is_literal) {
      return Status::DataLoss(
          fmt::format("key layout: {} hashes {}, not a column part of the key", name, x.dump()));
    }
    out->parts.push_back(static_cast<size_t>(i));
  }
  return Status::OK();
}

}  // namespace

Result<KeyCodec> KeyCodec::FromJson(std::string_view json) {
  try {
    auto j = nlohmann::json::parse(json);
    KeyForm form;
    if (!KeyFormNames().Parse(j.at("form").get<std::string>(), &form)) {
      return Status::DataLoss("key layout: unknown form");
    }
    const bool binary = form == KeyForm::kBinary;
    std::vector<KeyPartPlan> parts;
    for (const auto& pj : j.at("parts")) {
      KeyPartPlan p;
      p.name = pj.at("name");
      if (pj.contains("literal")) {
        p.is_literal = true;
        if (!FromStringBinary(pj.at("literal").get<std::string>(), &p.literal)) {
          return Status::DataLoss("key layout: malformed literal");
        }
      } else if (!ParseKeyType(pj.at("type").get<std::string>(), &p.type)) {
        return Status::DataLoss("key layout: unknown part type");
      } else {
        int64_t index = 0;
        if (!IntField(pj, "index", 0, kMaxKeyLayoutIndex, &index)) {
          return Status::DataLoss(fmt::format("key layout: part '{}' has no column index 0 to {}",
                                              p.name, kMaxKeyLayoutIndex));
        }
        p.index = static_cast<size_t>(index);
      }
      int64_t width = 0;
      if (!IntField(pj, "width", 0, kMaxKeyPartWidth, &width)) {
        return Status::DataLoss(
            fmt::format("key layout: part '{}' has no width 0 to {}", p.name, kMaxKeyPartWidth));
      }
      p.width = static_cast<int>(width);
      p.desc = pj.at("desc");
      p.reverse = pj.at("reverse");
      p.null_marker = pj.at("null_marker");
      // What the mapping loader and the planner never make.
      if (p.is_literal ? (p.desc || p.reverse)
                       : ((!binary && (p.desc || p.null_marker)) ||
                          (p.reverse && p.type != KeyType::kTimestamp) ||
                          (binary && p.width > 0 && p.type != KeyType::kString &&
                           p.type != KeyType::kBytes))) {
        return Status::DataLoss(fmt::format(
            "key layout: part '{}' combines its type and modifiers as no mapping can", p.name));
      }
      parts.push_back(std::move(p));
    }
    KeyHashPlan salt, hash;
    WIDEN_RETURN_IF_ERROR(HashField(j, "salt", 2, 256, parts, &salt));
    WIDEN_RETURN_IF_ERROR(HashField(j, "hash_prefix", 1, 8, parts, &hash));
    return KeyCodec(form, std::move(parts), j.at("separator"), std::move(salt), std::move(hash));
  } catch (const std::exception& e) {
    return Status::DataLoss(std::string("key layout: ") + e.what());
  }
}

}  // namespace widen
