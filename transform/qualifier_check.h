// The qualifier check: refuses a table design in which two cells of one row
// can get the same column (family:qualifier) by construction — two nests
// whose prefixes and ids can spell the same bytes, a plain column that a
// nest's prefix and id can spell, a second-level nest whose id runs into its
// parent's id, or a layout `cells` attribute that runs into another nest.
//
// Each source of qualifiers in a family is described as the set of byte
// strings it can write — a small automaton built from the prefix, the id
// parts as their encoding can spell them, separators and attribute names.
// A text part is its value's text form as docs/types.md gives it for the
// source column's type: an integer "0" or digits without a leading zero
// (a '-' only when the type holds negatives, at most the type's digits),
// exactly `width` digits when zero-padded; a uuid lower-case 8-4-4-4-12
// hex; a date YYYY-MM-DD; a timestamp, instant or time in the codec's
// forms (and the server's text a reader keeps for MySQL's zero dates and
// PostgreSQL's timestamps beyond 294247 AD); booleans, doubles, decimals
// and the infinities as printed; any other value any bytes without the id
// separator. A binary part is its fixed width, an escaped and terminated
// string (a structured text then its terminator), a decimal's layout. The
// family's
// qualifiers can collide exactly when some byte string is written by two
// different sources, or by one source for two different ids: the automaton
// is ambiguous, which a search of its product with itself decides. The
// check is exact for this model and errs only on the safe side (a value the
// model allows but the source never holds).
//
// Thread safety: a pure function.
#pragma once

#include "common/status.h"
#include "transform/plan.h"

namespace widen {

/// OK when no two cells of one row of `plan` can share a column; else
/// InvalidArgument "FILE:LINE:COL: table 'T': ... can give the same
/// qualifier, e.g. 'a112' (...)" naming both mapping places and a fix.
/// REQUIRES: `plan` comes from Plan::Make (its mapping is alive).
Status CheckQualifierCollisions(const TablePlan& plan);

}  // namespace widen
