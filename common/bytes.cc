#include "common/bytes.h"

#include <cstring>

namespace widen {

void PutFixed64BE(std::string* dst, uint64_t v) {
  char b[8];
  for (int i = 7; i >= 0; --i) {
    b[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  dst->append(b, 8);
}

void PutFixed32BE(std::string* dst, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  dst->append(b, 4);
}

void PutFixed16BE(std::string* dst, uint16_t v) {
  char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  dst->append(b, 2);
}

uint64_t DecodeFixed64BE(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint32_t DecodeFixed32BE(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint16_t DecodeFixed16BE(const char* p) {
  return static_cast<uint16_t>((static_cast<unsigned char>(p[0]) << 8) |
                               static_cast<unsigned char>(p[1]));
}

void AppendStringBinary(std::string* out, std::string_view bytes) {
  static const char kPunct[] = " `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?";
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : bytes) {
    bool plain = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                 (c != 0 && std::strchr(kPunct, c) != nullptr);
    if (plain) {
      out->push_back(static_cast<char>(c));
    } else {
      out->append("\\x");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

std::string ToStringBinary(std::string_view bytes) {
  std::string s;
  AppendStringBinary(&s, bytes);
  return s;
}

bool FromStringBinary(std::string_view text, std::string* out) {
  out->clear();
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'x') {
      if (i + 3 >= text.size()) return false;
      int h = hex(text[i + 2]), l = hex(text[i + 3]);
      if (h < 0 || l < 0) return false;
      out->push_back(static_cast<char>(h * 16 + l));
      i += 3;
    } else {
      out->push_back(text[i]);
    }
  }
  return true;
}

}  // namespace widen
