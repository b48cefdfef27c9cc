// The qualifier check: refuses a table design in which two cells of one row
// can get the same column (family:qualifier) by construction — two nests
// whose prefixes and ids can spell the same bytes, a plain column that a
// nest's prefix and id can spell, a second-level nest whose id runs into its
// parent's id, or a layout `cells` attribute that runs into another nest.
//
// Each source of qualifiers in a family is described as the set of byte
// strings it can write — a small automaton built from the prefix, the id
// parts as their encoding can spell them (text: an integer is an optional '-'
// and digits, exactly `width` digits when zero-padded; a string part is any
// bytes without the id separator; binary: fixed widths, escaped and
// terminated strings, ...), separators and attribute names. The family's
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
