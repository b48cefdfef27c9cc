#include "transform/ordered_bytes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/bytes.h"

namespace widen::ordered {

void PutInt(std::string* out, int64_t v, int width_bytes) {
  const int bits = width_bytes * 8;
  uint64_t u = static_cast<uint64_t>(v);
  if (bits < 64) u &= (uint64_t{1} << bits) - 1;
  u ^= uint64_t{1} << (bits - 1);
  for (int i = width_bytes - 1; i >= 0; --i) out->push_back(static_cast<char>(u >> (8 * i)));
}

void PutUInt64(std::string* out, uint64_t v) { PutFixed64BE(out, v); }

void PutDouble(std::string* out, double v) {
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
  uint64_t u;
  std::memcpy(&u, &v, 8);
  if (std::isnan(v)) u = 0x7ff8000000000000ull;  // canonical quiet NaN
  u = (u >> 63) ? ~u : (u ^ 0x8000000000000000ull);
  PutFixed64BE(out, u);
}

void PutFloat(std::string* out, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  if (std::isnan(v)) u = 0x7fc00000u;
  u = (u >> 31) ? ~u : (u ^ 0x80000000u);
  PutFixed32BE(out, u);
}

void PutBool(std::string* out, bool v) { out->push_back(v ? 1 : 0); }

bool PutDecimal(std::string* out, std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  size_t dot = s.find('.');
  std::string_view in = s.substr(0, dot);
  std::string_view fr = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (in.empty() && fr.empty()) return false;
  for (char c : in) {
    if (c < '0' || c > '9') return false;
  }
  for (char c : fr) {
    if (c < '0' || c > '9') return false;
  }
  // Significant digits and exponent: value = 0.D x 10^E.
  std::string digits;
  int64_t exponent;
  size_t lead = in.find_first_not_of('0');
  if (lead != std::string_view::npos) {
    digits.assign(in.substr(lead));
    exponent = static_cast<int64_t>(in.size() - lead);
    digits.append(fr);
  } else {
    size_t first = fr.find_first_not_of('0');
    if (first == std::string_view::npos) {
      out->push_back(0x02);  // zero (also -0)
      return true;
    }
    digits.assign(fr.substr(first));
    exponent = -static_cast<int64_t>(first);
  }
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  if (exponent > kMaxDecimalExponent || exponent < -kMaxDecimalExponent) return false;
  out->push_back(negative ? 0x01 : 0x03);
  const size_t from = out->size();
  PutInt(out, exponent, 4);
  out->append(digits);
  out->push_back(0x00);
  if (negative) Invert(out, from);
  return true;
}

void PutString(std::string* out, std::string_view bytes) {
  for (char c : bytes) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
  }
  out->push_back('\0');
  out->push_back('\x01');
}

bool PutFixedString(std::string* out, std::string_view bytes, int width) {
  if (bytes.size() > static_cast<size_t>(width) || bytes.find('\0') != std::string_view::npos) {
    return false;
  }
  out->append(bytes);
  out->append(width - bytes.size(), '\0');
  return true;
}

void Invert(std::string* out, size_t from) {
  for (size_t i = from; i < out->size(); ++i) (*out)[i] = static_cast<char>(~(*out)[i]);
}

bool GetInt(std::string_view* in, int width_bytes, int64_t* v) {
  if (in->size() < static_cast<size_t>(width_bytes)) return false;
  uint64_t u = 0;
  for (int i = 0; i < width_bytes; ++i) u = (u << 8) | static_cast<unsigned char>((*in)[i]);
  const int bits = width_bytes * 8;
  u ^= uint64_t{1} << (bits - 1);
  if (bits < 64 && (u >> (bits - 1)) & 1) u |= ~((uint64_t{1} << bits) - 1);  // sign-extend
  *v = static_cast<int64_t>(u);
  in->remove_prefix(width_bytes);
  return true;
}

bool GetUInt64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = DecodeFixed64BE(in->data());
  in->remove_prefix(8);
  return true;
}

bool GetDouble(std::string_view* in, double* v) {
  if (in->size() < 8) return false;
  uint64_t u = DecodeFixed64BE(in->data());
  u = (u >> 63) ? (u ^ 0x8000000000000000ull) : ~u;
  std::memcpy(v, &u, 8);
  if (std::isnan(*v) && u != 0x7ff8000000000000ull) return false;  // only the canonical NaN
  in->remove_prefix(8);
  return true;
}

bool GetFloat(std::string_view* in, float* v) {
  if (in->size() < 4) return false;
  uint32_t u = DecodeFixed32BE(in->data());
  u = (u >> 31) ? (u ^ 0x80000000u) : ~u;
  std::memcpy(v, &u, 4);
  if (std::isnan(*v) && u != 0x7fc00000u) return false;  // only the canonical NaN
  in->remove_prefix(4);
  return true;
}

bool GetBool(std::string_view* in, bool* v) {
  if (in->empty() || static_cast<unsigned char>((*in)[0]) > 1) return false;
  *v = (*in)[0] == 1;
  in->remove_prefix(1);
  return true;
}

size_t DecimalLength(std::string_view in, bool desc) {
  if (in.empty()) return 0;
  unsigned char h = static_cast<unsigned char>(in[0]);
  if (desc) h = static_cast<unsigned char>(~h);
  if (h == 0x02) return 1;
  if (h != 0x01 && h != 0x03) return 0;
  // Digits end at the terminator: 0x00 for positive, 0xFF for negative; desc inverts again.
  const bool negative = h == 0x01;
  const unsigned char term = (negative != desc) ? 0xFF : 0x00;
  for (size_t i = 5; i < in.size(); ++i) {
    if (static_cast<unsigned char>(in[i]) == term) return i + 1;
  }
  return 0;
}

bool GetDecimal(std::string_view* in, std::string* text) {
  size_t n = DecimalLength(*in, false);
  if (n == 0) return false;
  std::string part(in->substr(0, n));
  in->remove_prefix(n);
  text->clear();
  if (part[0] == 0x02) {
    *text = "0";
    return true;
  }
  const bool negative = part[0] == 0x01;
  if (negative) Invert(&part, 1);
  std::string_view body(part);
  body.remove_prefix(1);
  int64_t e;
  if (!GetInt(&body, 4, &e)) return false;
  std::string digits(body.substr(0, body.size() - 1));
  // Only what PutDecimal writes: significant digits without a leading or
  // trailing zero, and an exponent within the bound.
  if (digits.empty() || digits.front() == '0' || digits.back() == '0') return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  if (e > kMaxDecimalExponent || e < -kMaxDecimalExponent) return false;
  if (negative) text->push_back('-');
  if (e <= 0) {
    text->append("0.");
    text->append(static_cast<size_t>(-e), '0');
    text->append(digits);
  } else if (static_cast<size_t>(e) >= digits.size()) {
    text->append(digits);
    text->append(static_cast<size_t>(e) - digits.size(), '0');
  } else {
    text->append(digits.substr(0, e));
    text->push_back('.');
    text->append(digits.substr(e));
  }
  return true;
}

size_t StringLength(std::string_view in, bool desc) {
  const char zero = desc ? '\xff' : '\0';
  const char one = desc ? '\xfe' : '\x01';
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    if (in[i] == zero) {
      if (in[i + 1] == one) return i + 2;
      ++i;  // escaped 0x00
    }
  }
  return 0;
}

bool GetString(std::string_view* in, std::string* bytes) {
  bytes->clear();
  for (size_t i = 0; i + 1 < in->size(); ++i) {
    char c = (*in)[i];
    if (c != '\0') {
      bytes->push_back(c);
      continue;
    }
    char next = (*in)[i + 1];
    if (next == '\x01') {
      in->remove_prefix(i + 2);
      return true;
    }
    if (next != '\xff') return false;
    bytes->push_back('\0');
    ++i;
  }
  return false;
}

bool GetFixedString(std::string_view* in, int width, std::string* bytes) {
  if (in->size() < static_cast<size_t>(width)) return false;
  std::string_view s = in->substr(0, width);
  const size_t end = std::min(s.find('\0'), s.size());
  // The padding is 00 to the end: "ab\0c" is no value's encoding.
  if (s.find_first_not_of('\0', end) != std::string_view::npos) return false;
  bytes->assign(s.substr(0, end));
  in->remove_prefix(width);
  return true;
}

}  // namespace widen::ordered
