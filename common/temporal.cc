#include "common/temporal.h"

#include <charconv>
#include <chrono>

namespace widen {

namespace {

namespace chrono = std::chrono;

// The Gregorian calendar repeats after 400 years, which are 146097 days.
constexpr int64_t kYearsPerCycle = 400;
constexpr int64_t kDaysPerCycle = 146097;
// Dates are moved into [kBaseYear, kBaseYear + 400), well inside chrono's
// years (-32767 .. 32767), to do their calendar math there.
constexpr int64_t kBaseYear = 1970;

constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// `year` moved by whole cycles into [kBaseYear, kBaseYear + 400); *cycles
// gets how many were taken off.
chrono::year BaseYear(int64_t year, int64_t* cycles) {
  *cycles = FloorDiv(year - kBaseYear, kYearsPerCycle);
  return chrono::year{static_cast<int>(year - *cycles * kYearsPerCycle)};
}

void AppendPadded(std::string* out, uint64_t v, int width) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  const int digits = static_cast<int>(r.ptr - buf);
  if (digits < width) out->append(static_cast<size_t>(width - digits), '0');
  out->append(buf, r.ptr);
}

// HH:MM:SS[.ffffff] of a microsecond count (hours unbounded), trailing
// zeros of the fraction dropped.
void AppendClock(std::string* out, uint64_t micros) {
  const uint64_t secs = micros / kMicrosPerSecond, frac = micros % kMicrosPerSecond;
  AppendPadded(out, secs / 3600, 2);
  out->push_back(':');
  AppendPadded(out, (secs / 60) % 60, 2);
  out->push_back(':');
  AppendPadded(out, secs % 60, 2);
  if (frac != 0) {
    out->push_back('.');
    AppendPadded(out, frac, 6);
    while (out->back() == '0') out->pop_back();
  }
}

// Takes [min, max] decimal digits from the front of *s into *v.
bool TakeDigits(std::string_view* s, size_t min, size_t max, uint64_t* v) {
  size_t n = 0;
  uint64_t x = 0;
  while (n < s->size() && n < max && (*s)[n] >= '0' && (*s)[n] <= '9') {
    x = x * 10 + static_cast<uint64_t>((*s)[n] - '0');
    ++n;
  }
  if (n < min) return false;
  s->remove_prefix(n);
  *v = x;
  return true;
}

bool TakeChar(std::string_view* s, char c) {
  if (s->empty() || (*s)[0] != c) return false;
  s->remove_prefix(1);
  return true;
}

// [-]YYYY-MM-DD at the front of *s (years of 4 to 12 digits: far beyond any
// date a timestamp holds, well inside DaysFromCivil's range).
bool TakeDate(std::string_view* s, int64_t* days) {
  const bool negative = TakeChar(s, '-');
  uint64_t y, m, d;
  if (!TakeDigits(s, 4, 12, &y) || !TakeChar(s, '-') || !TakeDigits(s, 2, 2, &m) ||
      !TakeChar(s, '-') || !TakeDigits(s, 2, 2, &d)) {
    return false;
  }
  const int64_t year = negative ? -static_cast<int64_t>(y) : static_cast<int64_t>(y);
  if (!IsCivilDate(year, static_cast<int64_t>(m), static_cast<int64_t>(d))) return false;
  *days = DaysFromCivil(year, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// HH:MM:SS[.f{1,6}] at the front of *s, hours of 2 to `max_hour_digits`
// digits, as microseconds; false when it overflows.
bool TakeClock(std::string_view* s, size_t max_hour_digits, uint64_t* micros) {
  uint64_t h, m, sec, frac = 0;
  if (!TakeDigits(s, 2, max_hour_digits, &h) || !TakeChar(s, ':') || !TakeDigits(s, 2, 2, &m) ||
      !TakeChar(s, ':') || !TakeDigits(s, 2, 2, &sec) || m > 59 || sec > 59) {
    return false;
  }
  if (TakeChar(s, '.')) {
    const size_t before = s->size();
    if (!TakeDigits(s, 1, 6, &frac)) return false;
    for (size_t digits = before - s->size(); digits < 6; ++digits) frac *= 10;
  }
  uint64_t secs;
  return !__builtin_mul_overflow(h, uint64_t{3600}, &secs) &&
         !__builtin_add_overflow(secs, m * 60 + sec, &secs) &&
         !__builtin_mul_overflow(secs, static_cast<uint64_t>(kMicrosPerSecond), micros) &&
         !__builtin_add_overflow(*micros, frac, micros);
}

}  // namespace

int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day) {
  int64_t cycles;
  const chrono::year y = BaseYear(year, &cycles);
  // A day past the month's end: sys_days counts on from the month's first.
  const chrono::sys_days d{y / chrono::month{month} / chrono::day{day}};
  return d.time_since_epoch().count() + cycles * kDaysPerCycle;
}

void CivilFromDays(int64_t days, int64_t* year, unsigned* month, unsigned* day) {
  const int64_t cycles = FloorDiv(days, kDaysPerCycle);
  const chrono::year_month_day ymd{chrono::sys_days{chrono::days{days - cycles * kDaysPerCycle}}};
  *year = static_cast<int>(ymd.year()) + cycles * kYearsPerCycle;
  *month = static_cast<unsigned>(ymd.month());
  *day = static_cast<unsigned>(ymd.day());
}

bool IsCivilDate(int64_t year, int64_t month, int64_t day) {
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  int64_t cycles;
  const chrono::year_month_day ymd{BaseYear(year, &cycles),
                                   chrono::month{static_cast<unsigned>(month)},
                                   chrono::day{static_cast<unsigned>(day)}};
  return ymd.ok();
}

bool DayAndClockToMicros(int64_t days, int64_t clock_micros, int64_t* micros) {
  int64_t day_micros;
  return !__builtin_mul_overflow(days, kMicrosPerDay, &day_micros) &&
         !__builtin_add_overflow(day_micros, clock_micros, micros);
}

int64_t MicrosToMs(int64_t micros) {
  // chrono::floor compares the truncated quotient back in microseconds,
  // which fits for every int64.
  return chrono::floor<chrono::milliseconds>(chrono::microseconds{micros}).count();
}

bool MsToMicros(int64_t ms, int64_t* micros) {
  return !__builtin_mul_overflow(ms, kMicrosPerMs, micros);
}

bool DaysToMs(int64_t days, int64_t* ms) { return !__builtin_mul_overflow(days, kMsPerDay, ms); }

bool EpochMs(const Value& v, int64_t* ms) {
  if (v.is_null()) return false;
  switch (v.type()) {
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      if (IsInfinite(v.as_int())) return false;
      *ms = MicrosToMs(v.as_int());
      return true;
    case ValueType::kDate:
      return !IsInfinite(v.as_int()) && DaysToMs(v.as_int(), ms);
    case ValueType::kInt:
      *ms = v.as_int();
      return true;
    default:
      return false;
  }
}

void AppendDate(std::string* out, int64_t days) {
  if (IsInfinite(days)) {
    out->append(days > 0 ? "infinity" : "-infinity");
    return;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0) out->push_back('-');
  AppendPadded(out, y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y), 4);
  out->push_back('-');
  AppendPadded(out, m, 2);
  out->push_back('-');
  AppendPadded(out, d, 2);
}

void AppendTimestamp(std::string* out, int64_t micros, bool utc) {
  if (IsInfinite(micros)) {
    out->append(micros > 0 ? "infinity" : "-infinity");
    return;
  }
  const int64_t day = FloorDiv(micros, kMicrosPerDay);
  AppendDate(out, day);
  out->push_back(utc ? 'T' : ' ');
  // In [0, kMicrosPerDay); computed modulo 2^64, as day * kMicrosPerDay
  // alone is below INT64_MIN for the first hours of the range.
  AppendClock(out, static_cast<uint64_t>(micros) - static_cast<uint64_t>(day) * kMicrosPerDay);
  if (utc) out->push_back('Z');
}

void AppendTime(std::string* out, int64_t micros) {
  if (micros < 0) {
    out->push_back('-');
    AppendClock(out, 0 - static_cast<uint64_t>(micros));
  } else {
    AppendClock(out, static_cast<uint64_t>(micros));
  }
}

// Each parser reads loosely, then writes the value back: only the text the
// writer gives is accepted (zero padding, no trailing fraction zeros).
bool ParseDateText(std::string_view text, int64_t* days) {
  int64_t d;
  if (text == "infinity" || text == "-infinity") {
    d = text[0] == '-' ? kTemporalMinusInfinity : kTemporalInfinity;
  } else {
    std::string_view s = text;
    if (!TakeDate(&s, &d) || !s.empty()) return false;
  }
  std::string back;
  AppendDate(&back, d);
  if (back != text) return false;
  *days = d;
  return true;
}

bool ParseTimestampText(std::string_view text, bool utc, int64_t* micros) {
  int64_t v;
  if (text == "infinity" || text == "-infinity") {
    v = text[0] == '-' ? kTemporalMinusInfinity : kTemporalInfinity;
  } else {
    std::string_view s = text;
    int64_t days;
    uint64_t clock;
    if (!TakeDate(&s, &days) || !TakeChar(&s, utc ? 'T' : ' ') || !TakeClock(&s, 2, &clock) ||
        clock >= static_cast<uint64_t>(kMicrosPerDay) || (utc && !TakeChar(&s, 'Z')) ||
        !s.empty()) {
      return false;
    }
    // In 128 bits: the first day of the range starts below INT64_MIN.
    const __int128 t = static_cast<__int128>(days) * kMicrosPerDay + clock;
    if (t < INT64_MIN || t > INT64_MAX) return false;
    v = static_cast<int64_t>(t);
  }
  std::string back;
  AppendTimestamp(&back, v, utc);
  if (back != text) return false;
  *micros = v;
  return true;
}

bool ParseTimeText(std::string_view text, int64_t* micros) {
  std::string_view s = text;
  const bool negative = TakeChar(&s, '-');
  uint64_t clock;
  if (!TakeClock(&s, 13, &clock) || !s.empty() ||
      clock > (negative ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX))) {
    return false;
  }
  const int64_t v = negative ? static_cast<int64_t>(0 - clock) : static_cast<int64_t>(clock);
  std::string back;
  AppendTime(&back, v);
  if (back != text) return false;
  *micros = v;
  return true;
}

std::string MsText(int64_t ms) {
  int64_t micros;
  if (!MsToMicros(ms, &micros)) return std::to_string(ms);
  std::string s;
  AppendTimestamp(&s, micros, false);
  return s;
}

}  // namespace widen
