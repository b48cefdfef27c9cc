#include "transform/key_codec.h"
#include "transform/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

namespace widen {
namespace {

KeyPartPlan Part(std::string name, size_t index, KeyType type, int width = 0) {
  KeyPartPlan p;
  p.name = std::move(name);
  p.index = index;
  p.type = type;
  p.width = width;
  return p;
}

KeyCodec ProductCustomerOrder() {
  return KeyCodec(
      KeyForm::kText,
      {Part("product_code", 0, KeyType::kString), Part("customer_id", 1, KeyType::kInt32, 5),
       Part("order_id", 2, KeyType::kInt32, 6)},
      "|");
}

Row MakeRow(std::vector<Value> v) {
  Row r;
  r.values = std::move(v);
  return r;
}

Row Order(std::string product, int64_t customer, int64_t order) {
  return MakeRow({Value::Str(ValueType::kText, product), Value::Int(customer), Value::Int(order)});
}

// ---- text form -------------------------------------------------------------

TEST(TextKeyTest, ZeroPaddedAndSeparated) {
  KeyCodec codec = ProductCustomerOrder();
  std::string key;
  ASSERT_TRUE(codec.Encode(Order("A100", 1, 1042), &key).ok());
  EXPECT_EQ(key, "A100|00001|001042");
  std::vector<std::pair<std::string, std::string>> parts;
  ASSERT_TRUE(codec.Decode(key, &parts));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], (std::pair<std::string, std::string>("product_code", "A100")));
  EXPECT_EQ(parts[1].second, "00001");
  EXPECT_EQ(parts[2].second, "001042");
}

// A value wider than the part's width would sort out of order (1000 < 999
// as text): its row is refused, naming the width.
TEST(TextKeyTest, WiderValuesRejectTheRow) {
  std::string key;
  Status s = ProductCustomerOrder().Encode(Order("B", 1234567, 5), &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("key part 'customer_id' value '1234567' has 7 digits, more than the "
                             "part's width 5"),
            std::string::npos)
      << s.message();
  key.clear();
  ASSERT_TRUE(ProductCustomerOrder().Encode(Order("B", 99999, 5), &key).ok());
  EXPECT_EQ(key, "B|99999|000005");
}

TEST(TextKeyTest, SeparatorInsideValueIsRefused) {
  std::string key;
  Status s = ProductCustomerOrder().Encode(Order("A|100", 1, 2), &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("product_code"), std::string::npos);
  EXPECT_NE(s.message().find("separator"), std::string::npos);
}

TEST(TextKeyTest, NullPartIsRefused) {
  Row r = Order("A", 1, 2);
  r.values[1] = Value::Null(ValueType::kInt);
  std::string key;
  Status s = ProductCustomerOrder().Encode(r, &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("customer_id"), std::string::npos);
}

// Negative numbers cannot sort in a padded text part (-005 would sort after
// -010): refused, as are values wider than the width; the extremes of
// int64 and uint64 fit a width of 19 and 20.
TEST(TextKeyTest, NegativeAndExtremeIntegers) {
  KeyCodec codec(KeyForm::kText, {Part("n", 0, KeyType::kInt64, 4)}, "|");
  std::string key;
  Status s = codec.Encode(MakeRow({Value::Int(-7)}), &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is negative: in a text key with width 4"), std::string::npos)
      << s.message();
  EXPECT_EQ(codec.Encode(MakeRow({Value::Int(INT64_MIN)}), &key).code(),
            StatusCode::kInvalidArgument);
  KeyCodec wide(KeyForm::kText, {Part("n", 0, KeyType::kInt64, 19)}, "|");
  key.clear();
  ASSERT_TRUE(wide.Encode(MakeRow({Value::Int(INT64_MAX)}), &key).ok());
  EXPECT_EQ(key, "9223372036854775807");
  key.clear();
  ASSERT_TRUE(wide.Encode(MakeRow({Value::Int(0)}), &key).ok());
  EXPECT_EQ(key, "0000000000000000000");
  KeyCodec unsigned_wide(KeyForm::kText, {Part("n", 0, KeyType::kUInt64, 20)}, "|");
  key.clear();
  ASSERT_TRUE(unsigned_wide.Encode(MakeRow({Value::UInt(UINT64_MAX)}), &key).ok());
  EXPECT_EQ(key, "18446744073709551615");
  key.clear();
  EXPECT_EQ(wide.Encode(MakeRow({Value::UInt(UINT64_MAX)}), &key).code(),
            StatusCode::kInvalidArgument);
}

TEST(TextKeyTest, PaddedIntegersSortNumerically) {
  KeyCodec codec = ProductCustomerOrder();
  std::mt19937_64 rng(7);
  std::vector<std::pair<int64_t, std::string>> keys;
  for (int i = 0; i < 2000; ++i) {
    int64_t c = static_cast<int64_t>(rng() % 100000), o = static_cast<int64_t>(rng() % 1000000);
    std::string key;
    ASSERT_TRUE(codec.Encode(Order("A100", c, o), &key).ok());
    keys.emplace_back(c * 1000000 + o, key);
  }
  for (size_t i = 1; i < keys.size(); ++i) {
    EXPECT_EQ(keys[i - 1].first < keys[i].first, keys[i - 1].second < keys[i].second);
  }
}

TEST(TextKeyTest, ReverseTimestampIsNewestFirst) {
  KeyPartPlan user = Part("user_id", 0, KeyType::kInt32, 4);
  KeyPartPlan sent = Part("sent_at", 1, KeyType::kTimestamp);
  sent.reverse = true;
  KeyCodec codec(KeyForm::kText, {user, sent}, "|");
  auto at = [](int64_t ms) { return Value::Temporal(ValueType::kTimestamp, ms * 1000); };
  std::string older, newer;
  ASSERT_TRUE(codec.Encode(MakeRow({Value::Int(7), at(1000)}), &older).ok());
  ASSERT_TRUE(codec.Encode(MakeRow({Value::Int(7), at(2000)}), &newer).ok());
  EXPECT_EQ(older, "0007|9223372036854774807");  // Long.MAX_VALUE - 1000
  EXPECT_LT(newer, older);
  // Decoded as the time it holds, as a binary reverse part is.
  std::vector<std::pair<std::string, std::string>> parts;
  ASSERT_TRUE(codec.Decode(older, &parts));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1], (std::pair<std::string, std::string>("sent_at", "1970-01-01 00:00:01")));
  KeyCodec binary(KeyForm::kBinary, {user, sent}, "");
  std::string bkey;
  ASSERT_TRUE(binary.Encode(MakeRow({Value::Int(7), at(1000)}), &bkey).ok());
  std::vector<std::pair<std::string, std::string>> bparts;
  ASSERT_TRUE(binary.Decode(bkey, &bparts));
  ASSERT_EQ(bparts.size(), 2u);
  EXPECT_EQ(bparts[1], parts[1]);
  EXPECT_FALSE(codec.Decode("0007|92233720368547748x7", &parts)) << "not 19 digits";
}

TEST(TextKeyTest, SaltPrefixIsStableAndInRange) {
  KeyHashPlan salt;
  salt.size = 16;
  KeyCodec codec(KeyForm::kText, {Part("id", 0, KeyType::kInt64)}, "|", salt);
  std::set<std::string> buckets;
  for (int i = 0; i < 500; ++i) {
    std::string key;
    ASSERT_TRUE(codec.Encode(MakeRow({Value::Int(i)}), &key).ok());
    ASSERT_EQ(key[2], '|');
    int b = std::stoi(key.substr(0, 2));
    EXPECT_GE(b, 0);
    EXPECT_LT(b, 16);
    // The bucket is FNV-1a 32 of the part's text, mod 16 (docs/format.md).
    EXPECT_EQ(static_cast<uint32_t>(b), Fnv1a32(std::to_string(i)) % 16);
    buckets.insert(key.substr(0, 2));
  }
  EXPECT_EQ(buckets.size(), 16u) << "500 sequential ids spread over all buckets";
}

// Sequential ids must spread over the first byte of a hash prefix.
TEST(HashTest, HashPrefixSpreadsSequentialIds) {
  KeyHashPlan hash;
  hash.size = 2;
  KeyCodec codec(KeyForm::kBinary, {Part("id", 0, KeyType::kInt32)}, "", {}, hash);
  std::set<char> first;
  for (int i = 0; i < 1000; ++i) {
    std::string key;
    ASSERT_TRUE(codec.Encode(MakeRow({Value::Int(500000 + i)}), &key).ok());
    first.insert(key[0]);
  }
  EXPECT_GT(first.size(), 200u) << "1000 ids over 256 first-byte values";
}

// FNV-1a test vectors from the algorithm's reference (draft-eastlake-fnv).
TEST(HashTest, FnvVectors) {
  EXPECT_EQ(Fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

// ---- binary form: the ordering law -----------------------------------------

// A value of one key type with an independent reference comparison.
struct Gen {
  KeyType type;
  std::function<Value(std::mt19937_64&)> make;
  std::function<int(const Value&, const Value&)> cmp;  // non-NULL values
};

template <typename T>
int Sign(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Java's Double.compare: -0.0 < 0.0, NaN equal to itself and above +inf.
int JavaDoubleCompare(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) == std::isnan(b) ? 0 : (std::isnan(a) ? 1 : -1);
  if (a == 0 && b == 0) return Sign(std::signbit(b), std::signbit(a));
  return Sign(a, b);
}

// Exact decimal comparison on normalized digit strings (independent oracle).
int DecimalCompare(std::string_view a, std::string_view b) {
  auto norm = [](std::string_view s, bool* neg, std::string* in, std::string* fr) {
    *neg = !s.empty() && s[0] == '-';
    if (*neg) s.remove_prefix(1);
    size_t dot = s.find('.');
    *in = std::string(s.substr(0, dot));
    *fr = dot == std::string_view::npos ? "" : std::string(s.substr(dot + 1));
    in->erase(0, std::min(in->find_first_not_of('0'), in->size()));
    while (!fr->empty() && fr->back() == '0') fr->pop_back();
    if (in->empty() && fr->empty()) *neg = false;
  };
  bool na, nb;
  std::string ia, fa, ib, fb;
  norm(a, &na, &ia, &fa);
  norm(b, &nb, &ib, &fb);
  if (na != nb) return na ? -1 : 1;
  int m = ia.size() != ib.size() ? Sign(ia.size(), ib.size())
                                 : (ia != ib ? Sign(ia, ib) : Sign(fa, fb));
  return na ? -m : m;
}

std::vector<Gen> Generators() {
  auto pick = [](auto& rng, const auto& fixed, auto random) {
    return rng() % 3 == 0 ? random(rng) : fixed[rng() % fixed.size()];
  };
  std::vector<Gen> g;
  g.push_back({KeyType::kInt32,
               [pick](std::mt19937_64& r) {
                 static const std::vector<int64_t> f = {INT32_MIN, -1, 0, 1, INT32_MAX, -256, 255};
                 return Value::Int(pick(r, f, [](auto& rr) { return int64_t(int32_t(rr())); }));
               },
               [](const Value& a, const Value& b) { return Sign(a.as_int(), b.as_int()); }});
  g.push_back({KeyType::kInt64,
               [pick](std::mt19937_64& r) {
                 static const std::vector<int64_t> f = {INT64_MIN, -1, 0, 1, INT64_MAX};
                 return Value::Int(pick(r, f, [](auto& rr) { return int64_t(rr()); }));
               },
               [](const Value& a, const Value& b) { return Sign(a.as_int(), b.as_int()); }});
  g.push_back({KeyType::kInt16,
               [pick](std::mt19937_64& r) {
                 static const std::vector<int64_t> f = {INT16_MIN, -1, 0, 1, INT16_MAX};
                 return Value::Int(pick(r, f, [](auto& rr) { return int64_t(int16_t(rr())); }));
               },
               [](const Value& a, const Value& b) { return Sign(a.as_int(), b.as_int()); }});
  g.push_back({KeyType::kUInt64,
               [pick](std::mt19937_64& r) {
                 static const std::vector<uint64_t> f = {0, 1, UINT64_MAX, uint64_t(INT64_MAX) + 1};
                 return Value::UInt(pick(r, f, [](auto& rr) { return uint64_t(rr()); }));
               },
               [](const Value& a, const Value& b) { return Sign(a.as_uint(), b.as_uint()); }});
  g.push_back({KeyType::kFloat64,
               [pick](std::mt19937_64& r) {
                 static const std::vector<double> f = {-std::numeric_limits<double>::infinity(),
                                                       -1e308,
                                                       -1.5,
                                                       -0.0,
                                                       0.0,
                                                       std::numeric_limits<double>::denorm_min(),
                                                       1e-300,
                                                       2.5,
                                                       std::numeric_limits<double>::infinity(),
                                                       std::numeric_limits<double>::quiet_NaN(),
                                                       -std::numeric_limits<double>::quiet_NaN()};
                 return Value::Float(pick(r, f, [](auto& rr) {
                   return std::ldexp(double(int64_t(rr())) / 9.2e18, int(rr() % 200) - 100);
                 }));
               },
               [](const Value& a, const Value& b) {
                 return JavaDoubleCompare(a.as_double(), b.as_double());
               }});
  g.push_back({KeyType::kFloat32,
               [pick](std::mt19937_64& r) {
                 static const std::vector<double> f = {-std::numeric_limits<double>::infinity(),
                                                       -0.0, 0.0, 0.5f,
                                                       std::numeric_limits<double>::quiet_NaN()};
                 return Value::Float(
                     pick(r, f, [](auto& rr) { return double(float(int32_t(rr())) / 1024.0f); }));
               },
               [](const Value& a, const Value& b) {
                 return JavaDoubleCompare(a.as_double(), b.as_double());
               }});
  g.push_back(
      {KeyType::kDecimal,
       [](std::mt19937_64& r) {
         static const std::vector<std::string> f = {
             "0",    "-0",    "0.000",   "1",     "-1",     "10",
             "9.99", "100.5", "-100.50", "0.001", "-0.001", "123456789012345678901234567890.5"};
         if (r() % 2) return Value::Str(ValueType::kDecimal, f[r() % f.size()]);
         std::string s = r() % 2 ? "-" : "";
         s += std::to_string(r() % 1000);
         if (r() % 2) {
           s += ".";
           for (int i = 0, n = 1 + int(r() % 4); i < n; ++i) s += char('0' + r() % 10);
         }
         return Value::Str(ValueType::kDecimal, s);
       },
       [](const Value& a, const Value& b) { return DecimalCompare(a.as_bytes(), b.as_bytes()); }});
  g.push_back({KeyType::kString,
               [](std::mt19937_64& r) {
                 static const char kAlpha[] = {'\0', '\x01', 'a', 'b', '|', '\xff'};
                 std::string s;
                 for (int i = 0, n = int(r() % 5); i < n; ++i) s += kAlpha[r() % sizeof kAlpha];
                 return Value::Str(ValueType::kText, s);
               },
               [](const Value& a, const Value& b) {
                 int c = a.as_bytes().compare(b.as_bytes());
                 return c < 0 ? -1 : (c > 0 ? 1 : 0);
               }});
  g.push_back({KeyType::kBool, [](std::mt19937_64& r) { return Value::Bool(r() % 2); },
               [](const Value& a, const Value& b) { return Sign(a.as_int(), b.as_int()); }});
  g.push_back({KeyType::kDate,
               [](std::mt19937_64& r) {
                 return Value::Temporal(ValueType::kDate, int64_t(r() % 200000) - 100000);
               },
               [](const Value& a, const Value& b) { return Sign(a.as_int(), b.as_int()); }});
  g.push_back({KeyType::kTimestamp,
               [](std::mt19937_64& r) {
                 return Value::Temporal(ValueType::kTimestamp,
                                        (int64_t(r() % 4000000000000) - 2000000000000) * 1000);
               },
               [](const Value& a, const Value& b) { return Sign(a.as_int(), b.as_int()); }});
  return g;
}

struct Case {
  std::vector<Gen> gens;
  std::vector<bool> desc, marker;
};

int TupleCompare(const Case& c, const Row& a, const Row& b) {
  for (size_t i = 0; i < c.gens.size(); ++i) {
    const Value& x = a[i];
    const Value& y = b[i];
    int r;
    if (x.is_null() || y.is_null()) {
      r = Sign(!x.is_null(), !y.is_null());
    } else {
      r = c.gens[i].cmp(x, y);
    }
    if (c.desc[i]) r = -r;
    if (r != 0) return r;
  }
  return 0;
}

void CheckOrderingLaw(const Case& c, uint64_t seed) {
  std::vector<KeyPartPlan> parts;
  for (size_t i = 0; i < c.gens.size(); ++i) {
    KeyPartPlan p = Part("p" + std::to_string(i), i, c.gens[i].type);
    p.desc = c.desc[i];
    p.null_marker = c.marker[i];
    parts.push_back(p);
  }
  KeyCodec codec(KeyForm::kBinary, parts, "");
  std::mt19937_64 rng(seed);
  std::vector<std::pair<Row, std::string>> items;
  for (int n = 0; n < 300; ++n) {
    Row r;
    for (size_t i = 0; i < c.gens.size(); ++i) {
      if (c.marker[i] && rng() % 6 == 0) {
        r.values.push_back(Value::Null(ValueType::kText));
      } else {
        r.values.push_back(c.gens[i].make(rng));
      }
    }
    std::string key;
    Status s = codec.Encode(r, &key);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // Round trip: every part decodes to its display text.
    std::vector<std::pair<std::string, std::string>> decoded;
    ASSERT_TRUE(codec.Decode(key, &decoded)) << "seed " << seed;
    ASSERT_EQ(decoded.size(), c.gens.size());
    items.emplace_back(std::move(r), std::move(key));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    for (size_t j = 0; j < items.size(); ++j) {
      int want = TupleCompare(c, items[i].first, items[j].first);
      int got = items[i].second.compare(items[j].second);
      got = got < 0 ? -1 : (got > 0 ? 1 : 0);
      if (want != got) {
        ADD_FAILURE() << "seed " << seed << ": tuple order " << want << " but key order " << got
                      << " for " << items[i].first[0].DebugString() << " vs "
                      << items[j].first[0].DebugString();
        return;
      }
    }
  }
}

TEST(BinaryKeyTest, OrderingLawPerType) {
  auto gens = Generators();
  for (size_t t = 0; t < gens.size(); ++t) {
    for (int variant = 0; variant < 4; ++variant) {
      SCOPED_TRACE(std::string(KeyTypeName(gens[t].type)) + " variant " + std::to_string(variant));
      Case c;
      c.gens = {gens[t], gens[(t + 3) % gens.size()]};
      c.desc = {bool(variant & 1), false};
      c.marker = {bool(variant & 2), false};
      CheckOrderingLaw(c, 1000 + t * 10 + variant);
    }
  }
}

TEST(BinaryKeyTest, OrderingLawRandomTuples) {
  auto gens = Generators();
  std::mt19937_64 rng(99);
  for (int n = 0; n < 60; ++n) {
    Case c;
    size_t parts = 1 + rng() % 3;
    for (size_t i = 0; i < parts; ++i) {
      c.gens.push_back(gens[rng() % gens.size()]);
      c.desc.push_back(rng() % 2);
      c.marker.push_back(rng() % 2);
    }
    CheckOrderingLaw(c, 5000 + n);
  }
}

TEST(BinaryKeyTest, ExactBytes) {
  // int32 7 desc? no: plain int32 7 -> 80 00 00 07; string "a\0" -> 61 00 FF 00 01.
  KeyCodec codec(KeyForm::kBinary, {Part("i", 0, KeyType::kInt32), Part("s", 1, KeyType::kString)},
                 "");
  std::string key;
  ASSERT_TRUE(
      codec
          .Encode(MakeRow({Value::Int(7), Value::Str(ValueType::kText, std::string("a\0", 2))}),
                  &key)
          .ok());
  EXPECT_EQ(key, std::string("\x80\x00\x00\x07"
                             "a\x00\xff\x00\x01",
                             9));
  KeyPartPlan d = Part("i", 0, KeyType::kInt32);
  d.desc = true;
  KeyCodec desc(KeyForm::kBinary, {d}, "");
  key.clear();
  ASSERT_TRUE(desc.Encode(MakeRow({Value::Int(7)}), &key).ok());
  EXPECT_EQ(key, std::string("\x7f\xff\xff\xf8", 4));
  // decimal 12.5 -> 03, exponent 2 as int32 sign-flipped, '1' '2' '5', 00.
  KeyCodec dec(KeyForm::kBinary, {Part("d", 0, KeyType::kDecimal)}, "");
  key.clear();
  ASSERT_TRUE(dec.Encode(MakeRow({Value::Str(ValueType::kDecimal, "12.50")}), &key).ok());
  EXPECT_EQ(key, std::string("\x03\x80\x00\x00\x02"
                             "125\x00",
                             9));
}

TEST(BinaryKeyTest, NullRules) {
  KeyPartPlan m = Part("m", 0, KeyType::kInt32);
  m.null_marker = true;
  KeyCodec marker(KeyForm::kBinary, {m}, "");
  std::string null_key, zero_key, empty;
  ASSERT_TRUE(marker.Encode(MakeRow({Value::Null(ValueType::kInt)}), &null_key).ok());
  ASSERT_TRUE(marker.Encode(MakeRow({Value::Int(0)}), &zero_key).ok());
  EXPECT_EQ(null_key, std::string(1, '\0'));
  EXPECT_NE(null_key, zero_key);
  EXPECT_LT(null_key, zero_key);

  KeyCodec reject(KeyForm::kBinary, {Part("r", 0, KeyType::kString)}, "");
  std::string k1, k2;
  EXPECT_EQ(reject.Encode(MakeRow({Value::Null(ValueType::kText)}), &k1).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(reject.Encode(MakeRow({Value::Str(ValueType::kText, "")}), &k2).ok());
  EXPECT_EQ(k2, std::string("\x00\x01", 2)) << "'' is the terminator alone, never NULL";
}

TEST(BinaryKeyTest, OutOfRangeIsRefused) {
  KeyCodec codec(KeyForm::kBinary, {Part("small", 0, KeyType::kInt16)}, "");
  std::string key;
  Status s = codec.Encode(MakeRow({Value::Int(70000)}), &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("out of range for int16"), std::string::npos) << s.message();
}

TEST(BinaryKeyTest, LayoutSurvivesJson) {
  KeyPartPlan a = Part("user_id", 0, KeyType::kInt32);
  KeyPartPlan b = Part("sent_at", 1, KeyType::kTimestamp);
  b.reverse = true;
  KeyPartPlan lit;
  lit.name = "'x'";
  lit.is_literal = true;
  lit.literal = std::string("x\0", 2);
  KeyHashPlan salt;
  salt.size = 8;
  KeyCodec codec(KeyForm::kBinary, {a, lit, b}, "", salt);
  auto back = KeyCodec::FromJson(codec.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), codec.ToJson());
  Row r = MakeRow({Value::Int(42), Value::Temporal(ValueType::kTimestamp, 1700000000123000)});
  std::string k1, k2;
  ASSERT_TRUE(codec.Encode(r, &k1).ok());
  ASSERT_TRUE(back->Encode(r, &k2).ok());
  EXPECT_EQ(k1, k2);
  std::vector<std::pair<std::string, std::string>> parts;
  ASSERT_TRUE(back->Decode(k1, &parts));
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].first, "salt");
  EXPECT_EQ(parts[1], (std::pair<std::string, std::string>("user_id", "42")));
  EXPECT_EQ(parts[3], (std::pair<std::string, std::string>("sent_at", "2023-11-14 22:13:20.123")));
  EXPECT_EQ(codec.Anatomy(),
            "[salt 1B mod 8][user_id int32 4B][literal 'x\\x00'][sent_at timestamp reverse 8B]");
  EXPECT_EQ(KeyCodec::FromJson("{not json").status().code(), StatusCode::kDataLoss);
}

// The default key type is the narrowest that holds every value of the
// column's storage type: unsigned MySQL integers one size up, a domain its
// base type's, BIGINT UNSIGNED uint64, FLOAT(5,2) single precision.
TEST(DefaultKeyTypeTest, FollowsTheStorageType) {
  auto type_of = [](ValueType type, const char* source_type, const char* base_type = "") {
    SourceColumn c;
    c.type = type;
    c.source_type = source_type;
    c.base_type = base_type;
    return DefaultKeyType(c);
  };
  EXPECT_EQ(type_of(ValueType::kInt, "tinyint(4)"), KeyType::kInt8);
  EXPECT_EQ(type_of(ValueType::kInt, "tinyint(3) unsigned"), KeyType::kInt16);
  EXPECT_EQ(type_of(ValueType::kInt, "smallint unsigned"), KeyType::kInt32);
  EXPECT_EQ(type_of(ValueType::kInt, "mediumint(8) unsigned zerofill"), KeyType::kInt32);
  EXPECT_EQ(type_of(ValueType::kInt, "int(10) unsigned"), KeyType::kInt64);
  EXPECT_EQ(type_of(ValueType::kInt, "integer"), KeyType::kInt32);
  EXPECT_EQ(type_of(ValueType::kInt, "year(4)"), KeyType::kInt16);
  EXPECT_EQ(type_of(ValueType::kInt, "oid"), KeyType::kInt64);
  EXPECT_EQ(type_of(ValueType::kUInt, "bigint(20) unsigned"), KeyType::kUInt64);
  EXPECT_EQ(type_of(ValueType::kUInt, "bit(64)"), KeyType::kUInt64);
  EXPECT_EQ(type_of(ValueType::kUInt, "bit(5)"), KeyType::kInt8);
  EXPECT_EQ(type_of(ValueType::kInt, "small_d", "smallint"), KeyType::kInt16);
  EXPECT_EQ(type_of(ValueType::kInt, "big_d", "bigint"), KeyType::kInt64);
  EXPECT_EQ(type_of(ValueType::kFloat, "float(5,2)"), KeyType::kFloat32);
  EXPECT_EQ(type_of(ValueType::kFloat, "float unsigned"), KeyType::kFloat32);
  EXPECT_EQ(type_of(ValueType::kFloat, "double"), KeyType::kFloat64);
  EXPECT_EQ(type_of(ValueType::kFloat, "real_d", "real"), KeyType::kFloat32);
  EXPECT_EQ(type_of(ValueType::kFloat, "double precision"), KeyType::kFloat64);
}

// Integral decimals and doubles fit integer parts; values out of range,
// with a fraction, or not finite reject the row with what is true.
TEST(BinaryKeyTest, ExactConversionsOnly) {
  auto encode = [](KeyType type, const Value& v, std::string* key) {
    KeyCodec codec(KeyForm::kBinary, {Part("p", 0, type)}, "");
    key->clear();
    return codec.Encode(MakeRow({v}), key);
  };
  auto dec = [](const char* s) { return Value::Str(ValueType::kDecimal, s); };
  std::string key, expected;
  ASSERT_TRUE(encode(KeyType::kInt64, dec("42"), &key).ok());
  ASSERT_TRUE(encode(KeyType::kInt64, Value::Int(42), &expected).ok());
  EXPECT_EQ(key, expected);
  ASSERT_TRUE(encode(KeyType::kInt64, dec("42.000"), &key).ok());
  EXPECT_EQ(key, expected);
  ASSERT_TRUE(encode(KeyType::kInt64, Value::Float(42.0), &key).ok());
  EXPECT_EQ(key, expected);
  Status s = encode(KeyType::kInt64, dec("42.5"), &key);
  EXPECT_NE(s.message().find("is not an integer (it has a fraction)"), std::string::npos)
      << s.message();
  s = encode(KeyType::kInt64, Value::UInt(uint64_t{1} << 63), &key);
  EXPECT_NE(s.message().find("is out of range for int64"), std::string::npos) << s.message();
  s = encode(KeyType::kInt16, Value::Int(40000), &key);
  EXPECT_NE(s.message().find("is out of range for int16 (-32768 to 32767)"), std::string::npos)
      << s.message();
  s = encode(KeyType::kFloat64, Value::Int(INT64_MAX), &key);
  EXPECT_NE(s.message().find("a double cannot hold it exactly"), std::string::npos) << s.message();
  ASSERT_TRUE(encode(KeyType::kFloat64, dec("0.1"), &key).ok());
  ASSERT_TRUE(encode(KeyType::kFloat64, Value::Float(0.1), &expected).ok());
  EXPECT_EQ(key, expected);
  // Item: numeric Infinity is not NaN; the message says what is true.
  s = encode(KeyType::kDecimal, dec("Infinity"), &key);
  EXPECT_NE(s.message().find("value 'Infinity' is not a finite number"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("NaN cannot"), std::string::npos) << s.message();
  // A timestamp is not a date; a server-text timestamp is not infinite.
  s = encode(KeyType::kDate, Value::Temporal(ValueType::kTimestamp, 0), &key);
  EXPECT_NE(s.message().find("is a timestamp, not a date"), std::string::npos) << s.message();
  s = encode(KeyType::kTimestamp, Value::Str(ValueType::kOther, "294276-12-31 23:59:59.999999"),
             &key);
  EXPECT_NE(s.message().find("is kept as the server's text, not as a timestamp"), std::string::npos)
      << s.message();
  s = encode(KeyType::kTimestamp, Value::Temporal(ValueType::kTimestamp, INT64_MAX), &key);
  EXPECT_NE(s.message().find("is infinite"), std::string::npos) << s.message();
}

// A date's infinities are no timestamp either, in a `timestamp` part (both
// forms) and in a `reverse` one: refused as infinite, never written as the
// day their bits would wrap to.
TEST(BinaryKeyTest, InfiniteDatesAreNoTimestamps) {
  for (KeyForm form : {KeyForm::kBinary, KeyForm::kText}) {
    for (bool reverse : {false, true}) {
      if (form == KeyForm::kText && !reverse) continue;  // a text date part is its text
      KeyPartPlan p = Part("d", 0, KeyType::kTimestamp);
      p.reverse = reverse;
      KeyCodec codec(form, {p}, "|");
      for (int64_t days : {INT64_MAX, INT64_MIN}) {
        std::string key;
        Status s = codec.Encode(MakeRow({Value::Temporal(ValueType::kDate, days)}), &key);
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << days << " " << reverse;
        EXPECT_NE(s.message().find("is infinite; a timestamp key part holds finite values only"),
                  std::string::npos)
            << s.message();
      }
      // A finite date is its midnight.
      std::string key, expected;
      ASSERT_TRUE(codec.Encode(MakeRow({Value::Temporal(ValueType::kDate, 1)}), &key).ok());
      ASSERT_TRUE(
          codec.Encode(MakeRow({Value::Temporal(ValueType::kTimestamp, 86400000000)}), &expected)
              .ok());
      EXPECT_EQ(key, expected);
    }
  }
}

TEST(BinaryKeyTest, TypesThatCannotHoldAColumnAreKnown) {
  EXPECT_FALSE(KeyTypeAccepts(KeyType::kDate, ValueType::kTimestamp));
  EXPECT_FALSE(KeyTypeAccepts(KeyType::kInt32, ValueType::kText));
  EXPECT_FALSE(KeyTypeAccepts(KeyType::kTime, ValueType::kTimestamp));
  EXPECT_TRUE(KeyTypeAccepts(KeyType::kInt64, ValueType::kDecimal));
  EXPECT_TRUE(KeyTypeAccepts(KeyType::kTimestamp, ValueType::kDate));
  EXPECT_TRUE(KeyTypeAccepts(KeyType::kString, ValueType::kOther));
}

}  // namespace
}  // namespace widen
