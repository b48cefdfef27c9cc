// Draft: a first mapping drafted from a source schema's foreign-key graph
// (`widen init`), as commented YAML that explains each choice.
//
// The rule (docs/design.md, "How widen init drafts a design"), over the
// base tables in scope with a primary key (or a NOT NULL unique key) that
// are no partitions (PostgreSQL's partitioned table reads their rows),
// foreign keys to other tables in scope only:
//
//   link table   its key is exactly the columns of two foreign keys
//                (film_actor: film_id, actor_id): nested under each end that
//                is a target table (or nested one level), with the far end's
//                label columns copied into each cell by a nest join;
//   code table   no foreign key of its own, a one-column key and at most one
//                other column (genre: genre_id, name): references to it copy
//                its label, it never owns children;
//   child        a table with a NOT NULL foreign key to a table that is no
//                code table, chosen in this order: identifying (the foreign
//                key is the leading part of the child's key), ON DELETE
//                CASCADE, named after its parent (invoice_line -> invoice),
//                the only such foreign key: nested into that parent (the
//                qualifier prefix from the child's name, the id its key
//                minus the parent's part);
//   root         every other table: a target table of its own; and the
//                first table (in scope order) of children whose parents
//                lead back to them (a cycle of NOT NULL foreign keys).
//
// Nesting goes two levels deep: a child of a second-level child becomes a
// root. A child whose key is the foreign key itself (1:1) is copied into its
// parent by a join instead. Every other foreign key becomes a join that
// copies the referenced row's label columns (its unique text columns, then
// text columns named like a name, title, label, code, handle or email; at
// most three). `roots` replaces the rule for roots: exactly those tables
// are target tables, the others nest under them where a NOT NULL foreign key
// leads, and are left out otherwise.
//
// Keys follow the types: integers zero-padded to their type's widest value
// in the text form (when none is negative), dates and timestamps as text,
// one text column alone as text without separator; anything else, and
// several parts with a text one, in the binary form. Families: `d` for the
// row's own columns, one family per nested entity when there are one or
// two, one shared family `c` when there are more (the policy's
// max_families decides). Names follow `policy`; names that come out the same
// are numbered, and access pattern names are unique in the draft.
//
// Thread safety: one call per thread; `source` is used by it alone.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "extract/source.h"
#include "mapping/naming_policy.h"

namespace widen {

/// What DraftMapping drafts.
struct DraftOptions {
  /// The draft's `source` (a password in it is left out) and `target`
  /// ("" = leveldb:out/NAMESPACE); both written as ${WIDEN_SOURCE_URL:-...}
  /// and ${WIDEN_TARGET_URL:-...}.
  std::string source_url;
  std::string target_url;
  std::string dialect;     // "postgresql" or "mysql", for the header comment
  std::string name_space;  // the target tables' namespace; "" = the database's name
  /// The source tables in scope; empty = every table of the schema.
  std::vector<std::string> tables;
  /// The root tables; empty = the rule above.
  std::vector<std::string> roots;
  /// Names follow it (NamingPolicy::Default() when none was given).
  NamingPolicy policy;
  std::string policy_file;  // where the policy was read, for the header comment ("" = none)
  /// The mapping's JSON Schema (a path or URL) for the draft's first line,
  /// `# yaml-language-server: $schema=...` (editors' completion); "" = none.
  std::string schema_ref;
};

/// The draft.
struct Draft {
  std::string yaml;                   // the mapping, commented
  int target_tables = 0;              // tables drafted
  std::vector<std::string> left_out;  // source tables not mapped, each with why
  /// Tables in scope the database's statistics hold no row count for (never analyzed).
  std::vector<std::string> without_statistics;
};

/// Drafts a mapping from `schema`. `source` (may be null) answers the
/// smallest value of integer key columns (a negative one needs the binary
/// form). InvalidArgument naming the table or option: a table of `tables`
/// or `roots` that is not in the schema (or cannot be a root, and why), no
/// table to map (with each table left out and why), a `name_space` HBase or
/// the policy refuses, or a name the policy allows no form of (naming the
/// policy's rule).
Result<Draft> DraftMapping(const SourceSchema& schema, Source* source, const DraftOptions& options);

}  // namespace widen
