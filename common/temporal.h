// Temporal values: the one place widen converts between microseconds,
// milliseconds, days and calendar dates, and writes their text forms (and
// reads them back: key decoding). The
// readers (extract/), the key and value codecs, cell timestamps, lint and
// Value::AppendText all go through it, so they agree on every value.
//
// Units (as common/value.h stores them):
//   date       days since 1970-01-01, proleptic Gregorian; year 0 is 1 BC
//   timestamp  microseconds since 1970-01-01 00:00 (UTC for instants)
//   time       microseconds, may be negative or beyond 24 h (MySQL TIME)
//   cell       milliseconds since the epoch (HBase's cell timestamps)
// PostgreSQL's infinite dates and timestamps are kept as INT64_MAX
// ("infinity") and INT64_MIN ("-infinity"); they convert to nothing.
//
// Rounding: microseconds become milliseconds by flooring, toward negative
// infinity, for negative values too: 1969-12-31 23:59:59.9995 is -1 ms (the
// millisecond it falls in), never 0. Conversions that could overflow
// (days -> ms, ms -> microseconds) return false instead of wrapping.
//
// Calendar math is std::chrono's (year_month_day, sys_days, hh_mm_ss).
// chrono's years end at +-32767 while PostgreSQL's dates reach 5874897 AD,
// so dates are moved by whole 400-year cycles (146097 days, after which the
// Gregorian calendar repeats) into chrono's range and back.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "common/value.h"

namespace widen {

inline constexpr int64_t kMicrosPerMs = 1000;
inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMsPerDay = 86'400'000;
inline constexpr int64_t kMicrosPerDay = 86'400'000'000;

/// PostgreSQL's 'infinity' and '-infinity' dates and timestamps, as stored.
inline constexpr int64_t kTemporalInfinity = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kTemporalMinusInfinity = std::numeric_limits<int64_t>::min();

/// Whether a date or timestamp (days or microseconds) is one of the two
/// infinities.
constexpr bool IsInfinite(int64_t v) {
  return v == kTemporalInfinity || v == kTemporalMinusInfinity;
}

/// Days since 1970-01-01 of a calendar date. REQUIRES: 1 <= month <= 12,
/// 1 <= day <= 31, |year| < 2^40; a day past the month's end counts on into
/// the next month (Feb 30 is Mar 1 or 2), as std::chrono::sys_days does.
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

/// The calendar date of `days` since 1970-01-01. REQUIRES: !IsInfinite(days).
void CivilFromDays(int64_t days, int64_t* year, unsigned* month, unsigned* day);

/// Whether year-month-day is a date of the Gregorian calendar (month 1..12,
/// day within the month, Feb 29 in leap years only).
bool IsCivilDate(int64_t year, int64_t month, int64_t day);

/// Microseconds of a clock reading h:m:s.us (any signs and sizes whose
/// result fits; hours may exceed 24).
constexpr int64_t ClockMicros(int64_t hours, int64_t minutes, int64_t seconds, int64_t micros) {
  return ((hours * 60 + minutes) * 60 + seconds) * kMicrosPerSecond + micros;
}

/// The timestamp `clock_micros` after midnight of date `days`, in
/// microseconds since the epoch; false when it does not fit in 64 bits
/// (after 294247-01-10 04:00:54.775807).
bool DayAndClockToMicros(int64_t days, int64_t clock_micros, int64_t* micros);

/// Milliseconds of a microsecond count, floored (toward negative infinity):
/// -1 us is -1 ms. Defined for every int64 (the infinities included; check
/// IsInfinite first where they mean something else).
int64_t MicrosToMs(int64_t micros);

/// ms * 1000; false when it does not fit in 64 bits.
bool MsToMicros(int64_t ms, int64_t* micros);

/// Midnight UTC of date `days`, in ms since the epoch; false when it does not
/// fit in 64 bits (the infinities never do).
bool DaysToMs(int64_t days, int64_t* ms);

/// The milliseconds since the epoch a value stands for: timestamps and
/// instants floored to the ms, dates at midnight UTC, integers as they are
/// (taken as ms). False for NULL, the infinities and values of other types.
/// The cell timestamp of a version column, a `timestamp` key part and the
/// hbase codec's `long` of a date or time all come from here.
bool EpochMs(const Value& v, int64_t* ms);

/// Appends date `days` as "YYYY-MM-DD" (years before 0 as "-YYYY", beyond
/// 9999 with more digits), or "infinity" / "-infinity".
void AppendDate(std::string* out, int64_t days);

/// Appends timestamp `micros` as "YYYY-MM-DD HH:MM:SS[.ffffff]" (trailing
/// zeros of the fraction dropped), with `utc`: "YYYY-MM-DDTHH:MM:SS[.ffffff]Z";
/// or "infinity" / "-infinity".
void AppendTimestamp(std::string* out, int64_t micros, bool utc);

/// Appends time `micros` as "[-]HH:MM:SS[.ffffff]"; hours may exceed 24.
void AppendTime(std::string* out, int64_t micros);

/// Reads back the text AppendDate writes ("YYYY-MM-DD", "-YYYY-MM-DD",
/// "infinity", "-infinity") into days since 1970-01-01. False for any other
/// text, a date that is no calendar date (Feb 30) or a form AppendDate would
/// not write (missing zero padding, a '+' sign).
bool ParseDateText(std::string_view text, int64_t* days);

/// Reads back the text AppendTimestamp(…, utc) writes into microseconds
/// since the epoch; false for any other text (the other separator, a
/// fraction with trailing zeros or more than 6 digits, a clock past
/// 23:59:59.999999, a value beyond 64 bits).
bool ParseTimestampText(std::string_view text, bool utc, int64_t* micros);

/// Reads back the text AppendTime writes ("[-]HH:MM:SS[.ffffff]", hours may
/// exceed 24) into microseconds; false for any other text or a value beyond
/// 64 bits.
bool ParseTimeText(std::string_view text, int64_t* micros);

/// A cell or key timestamp `ms` for display: "YYYY-MM-DD HH:MM:SS[.fff]"
/// (UTC, no zone), or the number itself when it is beyond what microseconds
/// hold (the text of a timestamp could not be shown).
std::string MsText(int64_t ms);

}  // namespace widen
